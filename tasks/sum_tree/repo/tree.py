"""A tiny n-ary tree."""


class Node:
    def __init__(self, value, children=[]):
        self.value = value
        self.children = children

    def add(self, child):
        self.children.append(child)
        return child


def sum_tree(node):
    total = node.value
    for child in node.children:
        total += sum_tree(child)
    return total


def depth(node):
    if not node.children:
        return 1
    return 1 + max(depth(child) for child in node.children)
