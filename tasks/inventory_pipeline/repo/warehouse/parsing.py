def parse_line(line):
    item, _, count = line.partition(":")
    return item.strip(), int(count)
