#!/usr/bin/env python3
"""Validates every job file of the repository against docs/jobrunner.schema.json.

Run by SchemaTests (swift test) and usable alone: `python3 Tests/Schema/check_job_files.py`.
Files under a `broken/` directory are meant to be invalid and must fail instead. Needs the PyPI
packages jsonschema and PyYAML, which `make test` installs.
"""
import json
import pathlib
import sys

import jsonschema
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
SKIPPED = {".build", ".git", "bench"}


class KeysAsWritten(yaml.SafeLoader):
    """YAML as jobrunner reads it: a map's keys are the words written (`on:` is the key "on",
    not the boolean true), merge keys merged."""

    def construct_mapping(self, node, deep=False):
        self.flatten_mapping(node)
        mapping = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else self.construct_object(key_node)
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping


KeysAsWritten.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, KeysAsWritten.construct_mapping)


def job_files():
    for path in sorted(ROOT.rglob("*.y*ml")):
        relative = path.relative_to(ROOT)
        if path.suffix in (".yaml", ".yml") and not SKIPPED.intersection(relative.parts):
            yield relative


def main():
    schema = json.loads((ROOT / "docs" / "jobrunner.schema.json").read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    failures = 0
    checked = 0
    for relative in job_files():
        broken = "broken" in relative.parts
        try:
            document = yaml.load((ROOT / relative).read_text(), Loader=KeysAsWritten)
            errors = list(validator.iter_errors(document))
        except yaml.YAMLError as error:
            errors = [error]
        checked += 1
        if broken:
            # The YAML fixture of a loader error the schema cannot see (a cycle, an unknown need)
            # may be valid here; those whose every error is of the schema's kind must not be.
            if relative.stem in ("unknown-keys", "types", "version") and not errors:
                print(f"{relative}: expected the schema to reject this broken file")
                failures += 1
            continue
        for error in errors:
            where = "/".join(str(part) for part in getattr(error, "absolute_path", []))
            print(f"{relative}: {where or '(top)'}: {getattr(error, 'message', error)}")
            failures += 1
    print(f"{checked} job files checked against docs/jobrunner.schema.json, {failures} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
