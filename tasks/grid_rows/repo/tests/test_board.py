from board import count_marks, make_board, place


def test_single_mark():
    board = place(make_board(3), 0, 1)
    assert count_marks(board) == 1
    assert board[1] == [0, 0, 0]


def test_diagonal():
    board = make_board(2)
    place(board, 0, 0)
    place(board, 1, 1)
    assert board == [[1, 0], [0, 1]]
