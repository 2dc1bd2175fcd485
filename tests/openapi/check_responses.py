#!/usr/bin/env python3
"""Checks real answers of `sendat serve` against the OpenAPI document it serves.

  check_responses.py OPENAPI.json ANSWERS.ndjson
ANSWERS has one {"method","path","status","body"} per line (path as requested, query and all).
Each body is validated (JSON Schema 2020-12, python3-jsonschema) against the schema the
document gives for that route, method and status; a status the document does not list for the
route fails too. Exit 0 all match, 1 a mismatch, 77 no jsonschema module (skipped)."""
import json
import re
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is missing: skipped")
    sys.exit(77)


def route(doc, path):
    path = path.split("?", 1)[0]
    for template in doc["paths"]:
        pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$"
        if re.match(pattern, path):
            return template
    return None


def resolve(doc, node):
    while isinstance(node, dict) and "$ref" in node:
        target = doc
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node


def check(doc, answer):
    template = route(doc, answer["path"])
    op = doc["paths"][template].get(answer["method"].lower()) if template else None
    if not op:  # the document says: any other route is answered 404 with the error shape
        if answer["status"] != 404:
            return f"{answer['method']} {answer['path']} is no route but answered {answer['status']}"
        schema = {"$ref": "#/components/schemas/Error"}
    elif str(answer["status"]) not in op["responses"]:
        return f"{answer['method']} {template} answered {answer['status']}, which the document does not list"
    else:
        schema = resolve(doc, op["responses"][str(answer["status"])])["content"]["application/json"]["schema"]
    root = dict(schema)
    root["components"] = doc["components"]
    errors = sorted(jsonschema.Draft202012Validator(root).iter_errors(answer["body"]), key=str)
    if errors:
        return f"{answer['method']} {answer['path']} {answer['status']}: {errors[0].message}"
    return None


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    failures, count = [], 0
    with open(argv[2], encoding="utf-8") as f:
        for line in f:
            if line.strip():
                count += 1
                why = check(doc, json.loads(line))
                if why:
                    failures.append(why)
    for why in failures:
        print(why, file=sys.stderr)
    print(f"{count} answers checked, {len(failures)} not as documented")
    return 1 if failures or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
