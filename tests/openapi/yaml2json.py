#!/usr/bin/env python3
"""docs/openapi.yaml as the JSON the server embeds (producer/openapi.json).

  python3 tests/openapi/yaml2json.py docs/openapi.yaml > producer/openapi.json   # after an edit
  python3 tests/openapi/yaml2json.py --check docs/openapi.yaml producer/openapi.json  # ctest
The YAML is the one source; --check exits 1 if the JSON copy is not its conversion."""
import json
import sys

import yaml


def convert(path):
    with open(path, encoding="utf-8") as f:
        return json.dumps(yaml.safe_load(f), indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def main(argv):
    if len(argv) == 4 and argv[1] == "--check":
        with open(argv[3], encoding="utf-8") as f:
            if f.read() != convert(argv[2]):
                print(f"{argv[3]} is not {argv[2]} converted: run\n"
                      f"  python3 tests/openapi/yaml2json.py {argv[2]} > {argv[3]}", file=sys.stderr)
                return 1
        return 0
    if len(argv) == 2:
        sys.stdout.write(convert(argv[1]))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
