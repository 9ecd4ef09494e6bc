# SPDX-License-Identifier: BSD-3-Clause
"""Identify data and log pages as objects: the library's own printer (unvme_print_*, JSON
form) decodes the structure with the field names of the NVMe specification in lower case, and
a Record exposes them as attributes (id.mn, id.sn, smart.temperature) and as a dict."""
import json


class Record:
    def __init__(self, kind, fields, raw=None):
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_fields", fields)
        object.__setattr__(self, "raw", raw)

    def __getattr__(self, name):
        try:
            v = self._fields[name]
        except KeyError:
            raise AttributeError(f"{self._kind} has no field '{name}'") from None
        return Record(f"{self._kind}.{name}", v) if isinstance(v, dict) else v

    def __setattr__(self, name, value):
        raise AttributeError(f"{self._kind} is read-only")

    def __getitem__(self, name):
        return self._fields[name]

    def __contains__(self, name):
        return name in self._fields

    def __dir__(self):
        return list(self._fields) + ["raw", "to_dict"]

    def to_dict(self):
        return json.loads(json.dumps(self._fields))

    def __repr__(self):
        head = ", ".join(f"{k}={v!r}" for k, v in list(self._fields.items())[:4])
        return f"<{self._kind} {head}, ...>"


def from_printer(kind, printer, data, raw=None):
    from . import _lib
    return Record(kind, json.loads(_lib.print_json(printer, data)), raw)
