"""advect.pytree: the node kinds, their structure, and gradients in the argument's structure."""

import dataclasses
from collections import namedtuple

import numpy as np
import pytest

import advect as ad
from advect.pytree import (
    Static,
    TreeDef,
    format_path,
    register_dataclass,
    register_pytree_node,
    static,
    tree_flatten,
    tree_flatten_with_paths,
    tree_leaves,
    tree_map,
    tree_unflatten,
)

Point = namedtuple("Point", "x y")


@dataclasses.dataclass
class Layer:
    weight: np.ndarray
    bias: np.ndarray
    name: str = "dense"


register_pytree_node(Layer, flatten_fn=lambda layer: ((layer.weight, layer.bias), layer.name),
                     unflatten_fn=lambda name, children: Layer(*children, name=name))

TREES = [
    1.0,
    (1, 2),
    [1, [2, 3]],
    {"b": 1, "a": (2, None)},
    None,
    Point(1, (2, 3)),
    Layer(1, 2, "out"),
    {"layers": [Layer(1, 2), Layer(3, 4)], "scale": Point(5, None)},
    (),
    {},
]


@pytest.mark.parametrize("tree", TREES, ids=repr)
def test_flatten_unflatten_round_trip(tree):
    leaves, treedef = tree_flatten(tree)
    assert treedef.num_leaves == len(leaves)
    rebuilt = tree_unflatten(treedef, leaves)
    assert rebuilt == tree and type(rebuilt) is type(tree)
    assert tree_flatten(rebuilt)[1] == treedef
    assert hash(tree_flatten(rebuilt)[1]) == hash(treedef)


def test_dict_leaves_follow_sorted_keys_and_none_has_no_leaves():
    assert tree_leaves({"b": 1, "a": [2, None, 3]}) == [2, 3, 1]
    assert tree_leaves(None) == [] and tree_leaves((None, None)) == []


def test_structure_differences_are_visible_in_treedefs():
    assert tree_flatten((1, 2))[1] != tree_flatten([1, 2])[1]
    assert tree_flatten({"a": 1})[1] != tree_flatten({"b": 1})[1]
    assert tree_flatten(Layer(1, 2, "a"))[1] != tree_flatten(Layer(1, 2, "b"))[1]
    assert tree_flatten(Point(1, 2))[1] != tree_flatten((1, 2))[1]
    assert isinstance(tree_flatten(1)[1], TreeDef)


def test_tree_map_over_several_trees_and_structure_mismatch():
    assert tree_map(lambda a, b: a * b, {"k": (2, 3)}, {"k": (4, 5)}) == {"k": (8, 15)}
    with pytest.raises(TypeError, match="tree structures differ"):
        tree_map(lambda a, b: a, (1, 2), [1, 2])


def test_is_leaf_stops_descent():
    leaves, treedef = tree_flatten({"p": (1, 2), "q": 3}, is_leaf=lambda t: isinstance(t, tuple))
    assert leaves == [(1, 2), 3]
    assert tree_unflatten(treedef, ["x", "y"]) == {"p": "x", "q": "y"}


def test_paths_name_every_leaf():
    pairs, _ = tree_flatten_with_paths({"w": [10, 20], "b": Point(1, 2)})
    assert pairs == [(("b", 0), 1), (("b", 1), 2), (("w", 0), 10), (("w", 1), 20)]
    assert format_path(("w", 0)) == "['w'][0]"


def test_unflatten_with_wrong_leaf_count_raises():
    _, treedef = tree_flatten((1, 2))
    with pytest.raises(ValueError, match="too few"):
        tree_unflatten(treedef, [1])
    with pytest.raises(ValueError, match="too many"):
        tree_unflatten(treedef, [1, 2, 3])


def test_registering_twice_or_a_builtin_raises():
    with pytest.raises(ValueError, match="already"):
        register_pytree_node(Layer, flatten_fn=lambda x: ((), None),
                             unflatten_fn=lambda a, c: None)
    with pytest.raises(ValueError):
        register_pytree_node(dict, flatten_fn=lambda x: ((), None),
                             unflatten_fn=lambda a, c: None)


# --- gradients come back in the argument's structure --------------------------------------

def test_gradient_of_nested_containers_keeps_their_structure():
    params = {"layers": [Layer(np.array([1.0, 2.0]), np.array(0.5)),
                         Layer(np.array([3.0]), np.array(-1.0), "head")],
              "point": Point(2.0, None), "pair": (np.array([1.0]), 4.0)}

    def loss(p):
        total = sum(np.sum(layer.weight ** 2) * layer.bias for layer in p["layers"])
        return total + p["point"].x ** 3 + np.sum(p["pair"][0]) * p["pair"][1]

    g = ad.grad(loss)(params)
    assert tree_flatten(g)[1] == tree_flatten(params)[1]
    assert g["layers"][1].name == "head" and g["point"].y is None
    np.testing.assert_allclose(g["layers"][0].weight, [1.0, 2.0])
    np.testing.assert_allclose(g["layers"][0].bias, 5.0)
    np.testing.assert_allclose(g["layers"][1].weight, [-6.0])
    np.testing.assert_allclose(g["layers"][1].bias, 9.0)
    assert g["point"].x == 12.0 and type(g["point"].x) is float
    np.testing.assert_allclose(g["pair"][0], [4.0])
    assert g["pair"][1] == 1.0


def test_jvp_and_vjp_take_and_give_pytrees():
    f = lambda p: {"sum": p.x + p.y, "prod": p.x * p.y}
    primal = Point(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    _, tangent = ad.jvp(f)(primal, tangents=Point(np.ones(2), np.zeros(2)))
    np.testing.assert_array_equal(tangent["sum"], np.ones(2))
    np.testing.assert_array_equal(tangent["prod"], primal.y)
    _, pullback = ad.vjp(f)(primal)
    ct = pullback({"sum": np.ones(2), "prod": np.ones(2)})
    assert isinstance(ct, Point)
    np.testing.assert_array_equal(ct.x, 1 + primal.y)
    np.testing.assert_array_equal(ct.y, 1 + primal.x)


def test_tangent_structure_mismatch_raises_type_error():
    with pytest.raises(TypeError, match="structure"):
        ad.jvp(lambda p: p[0])((np.ones(2), np.ones(2)), tangents=[np.ones(2), np.ones(2)])


def test_dict_with_unsortable_keys_raises_a_clear_type_error():
    with pytest.raises(TypeError, match="sortable keys"):
        tree_flatten({1: "a", "b": 2})


# --- static metadata, registration rules, paths (issue 14 item 7) ---------------------------

def test_static_is_structure_not_a_leaf_and_survives_maps_and_round_trips():
    tree = {"w": np.ones(2), "cfg": static({"act": "tanh", "n": 2})}
    leaves, treedef = tree_flatten(tree)
    assert len(leaves) == 1
    rebuilt = tree_unflatten(treedef, leaves)
    assert rebuilt["cfg"] == tree["cfg"] and isinstance(rebuilt["cfg"], Static)
    mapped = tree_map(lambda a: a * 2, tree)
    assert mapped["cfg"].value == {"act": "tanh", "n": 2}
    assert tree_flatten(static(1))[1] != tree_flatten(static(1.0))[1]
    assert tree_flatten(static(np.arange(3)))[1] == tree_flatten(static(np.arange(3)))[1]
    assert tree_flatten(static(np.arange(3)))[1] != tree_flatten(static(np.arange(4)))[1]


def test_static_snapshots_its_value_and_refuses_tracers():
    options = {"scale": 2.0}
    s = static(options)
    options["scale"] = 3.0
    assert s.value == {"scale": 2.0}
    with pytest.raises(TypeError, match="traced array"):
        ad.grad(lambda x: np.sum(static([x]).value[0]))(np.ones(2))


def test_static_in_a_differentiated_tree_and_in_a_staged_signature():
    def loss(p):
        return np.sum(p["w"] ** 2) * p["cfg"].value["scale"]

    params = {"w": np.array([1.0, 2.0]), "cfg": static({"scale": 3.0})}
    g = ad.grad(loss)(params)
    np.testing.assert_allclose(g["w"], [6.0, 12.0])
    assert g["cfg"] == params["cfg"]
    program = ad.stage(loss, params)
    assert float(program(params)) == 15.0
    with pytest.raises(TypeError, match="static value"):
        program({"w": params["w"], "cfg": static({"scale": 4.0})})
    with pytest.raises(TypeError, match="static"):
        program({"w": params["w"], "cfg": {"scale": 3.0}})


class Base:
    def __init__(self, a, b):
        self.a, self.b = a, b


class Child(Base):
    pass


class GrandChild(Child):
    pass


register_pytree_node(Base, flatten_fn=lambda o: ((o.a, o.b), type(o)),
                     unflatten_fn=lambda cls, ch: cls(*ch), include_subclasses=True)
register_pytree_node(Child, flatten_fn=lambda o: ((o.b,), (type(o), o.a)),
                     unflatten_fn=lambda aux, ch: aux[0](aux[1], *ch), include_subclasses=True)


def test_include_subclasses_and_the_nearest_registered_base_wins():
    assert tree_leaves(Base(1, 2)) == [1, 2]
    assert tree_leaves(GrandChild(1, 2)) == [2]   # Child's rule, the nearest base
    rebuilt = tree_map(lambda v: v * 10, GrandChild(1, 2))
    assert type(rebuilt) is GrandChild and (rebuilt.a, rebuilt.b) == (1, 20)


class Vector:
    def __init__(self, values, unit):
        self.values, self.unit = values, unit

    def __advect_tree_flatten__(self):
        return (self.values,), self.unit

    @classmethod
    def __advect_tree_unflatten__(cls, unit, children):
        return cls(children[0], unit)


class Velocity(Vector):
    pass


def test_class_protocol_is_inherited_by_subclasses():
    v = Velocity(np.array([1.0, 2.0]), "m/s")
    leaves, treedef = tree_flatten(v)
    assert len(leaves) == 1 and treedef.kind is Velocity
    g = ad.grad(lambda v: np.sum(v.values ** 2))(v)
    assert type(g) is Velocity and g.unit == "m/s"
    np.testing.assert_allclose(g.values, [2.0, 4.0])


@register_dataclass
@dataclasses.dataclass
class Dense:
    weight: np.ndarray
    bias: np.ndarray
    activation: str = dataclasses.field(default="tanh", metadata={"static": True})


def test_dataclass_decorator_fields_are_children_static_fields_structure():
    layer = Dense(np.array([1.0, 2.0]), np.array(0.5), "relu")
    assert len(tree_leaves(layer)) == 2
    assert tree_flatten(layer)[1] != tree_flatten(Dense(layer.weight, layer.bias))[1]
    g = ad.grad(lambda d: np.sum(d.weight * d.bias))(layer)
    assert isinstance(g, Dense) and g.activation == "relu"
    np.testing.assert_allclose(g.weight, [0.5, 0.5])
    np.testing.assert_allclose(g.bias, 3.0)
    with pytest.raises(TypeError, match="not a dataclass"):
        register_dataclass(Base)


def test_paths_in_jax_layout_and_format_path():
    pairs, treedef = tree_flatten_with_paths({"p": [np.ones(1), static("s"), 2.0]})
    assert [path for path, _ in pairs] == [("p", 0), ("p", 2)]
    assert format_path(pairs[1][0]) == "['p'][2]"
    assert tree_unflatten(treedef, [leaf for _, leaf in pairs])["p"][1] == static("s")


def test_string_and_none_leaves_pass_through_with_none_gradients():
    params = {"w": np.array([1.0, 2.0]), "name": "layer", "extra": None}
    g = ad.grad(lambda p: np.sum(p["w"] ** 2) if p["name"] == "layer" else 0.0)(params)
    np.testing.assert_allclose(g["w"], [2.0, 4.0])
    assert g["name"] is None and g["extra"] is None


def test_none_is_a_zero_cotangent_for_an_output_leaf_or_subtree():
    f = lambda x: {"a": np.sin(x), "b": (x ** 2, 3 * x)}
    x = np.array([0.5, 1.0])
    _, pullback = ad.vjp(f)(x)
    np.testing.assert_allclose(pullback({"a": None, "b": (np.ones(2), None)}), 2 * x)
    _, lm = ad.linearize(f, x)
    np.testing.assert_allclose(lm.pullback({"a": np.ones(2), "b": None}), np.cos(x))
    np.testing.assert_allclose(lm.pullback({"a": None, "b": None}), 0.0)
    with pytest.raises(TypeError, match="zero cotangent"):
        lm.pullback({"a": None})
    lm.close()


def test_hessian_diag_of_several_inputs_is_a_tuple_matching_the_dense_blocks():
    f = lambda x, y: np.sum(np.sin(x) * y ** 3) + x[0] * y[1]
    x, y = np.array([0.3, 1.2]), np.array([0.7, -0.4])
    dx, dy = ad.hessian_diag(f, argnums=(0, 1))(x, y)
    blocks = ad.hessian(f, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(dx, np.diag(blocks[0][0]), rtol=1e-12)
    np.testing.assert_allclose(dy, np.diag(blocks[1][1]), rtol=1e-12)
    np.testing.assert_allclose(dx, -np.sin(x) * y ** 3, rtol=1e-12)
