def make_board(size):
    return [[0] * size] * size


def place(board, row, col):
    board[row][col] = 1
    return board


def count_marks(board):
    return sum(sum(row) for row in board)
