"""advect.pytree: the node kinds, their structure, and gradients in the argument's structure."""

import dataclasses
from collections import namedtuple

import numpy as np
import pytest

import advect as ad
from advect.pytree import (
    TreeDef,
    format_path,
    register_pytree_node,
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
