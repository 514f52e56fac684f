"""``advect.scipy.sparse``: the differentiable counterpart of ``scipy.sparse``; its ``linalg``
submodule holds the ``gmres_solver`` callback for ``advect.implicit_root``."""
