from tree import Node, depth, sum_tree


def test_single_node():
    assert sum_tree(Node(1)) == 1


def test_small_tree():
    root = Node(1)
    left = root.add(Node(2))
    left.add(Node(4))
    root.add(Node(3))
    assert sum_tree(root) == 10


def test_trees_are_independent():
    a = Node(5)
    a.add(Node(1))
    b = Node(7)
    assert sum_tree(b) == 7
    assert sum_tree(a) == 6


def test_depth():
    root = Node(0)
    root.add(Node(1)).add(Node(2))
    assert depth(root) == 3
