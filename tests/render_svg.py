#!/usr/bin/env python3
"""Parse a render flame graph SVG with a strict XML parser and print one
TSV line per box: name, weight (v), x, y, width, fill, delta, label.
Names are printed with repr() escapes for non-printable characters so
tests can grep them.  Exits 1 if the SVG is not well-formed XML.

  render_svg.py FILE.svg          boxes
  render_svg.py --meta FILE.svg   title, subtitle, notes, frames attributes
"""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def show(s):
    out = []
    for ch in s:
        if ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        else:
            out.append(ch)
    return "".join(out)


def main():
    meta = sys.argv[1] == "--meta"
    path = sys.argv[-1]
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        print("not well-formed XML: %s" % e, file=sys.stderr)
        sys.exit(1)
    frames = None
    for el in root.iter():
        if el.get("id") == "frames":
            frames = el
    if meta:
        for el in root.iter():
            i = el.get("id")
            if i in ("title", "subtitle", "notes"):
                print("%s\t%s" % (i, show(el.text or "")))
        if frames is not None:
            for k, v in sorted(frames.attrib.items()):
                print("frames.%s\t%s" % (k, v))
        print("height\t%s" % root.get("height"))
        print("width\t%s" % root.get("width"))
        print("scripts\t%d" % sum(1 for el in root.iter() if el.tag == NS + "script"))
        return
    if frames is None:
        print("no frames group", file=sys.stderr)
        sys.exit(1)
    for g in frames:
        title = g.find(NS + "title")
        rect = g.find(NS + "rect")
        text = g.find(NS + "text")
        print("\t".join([show(title.text or ""), rect.get("v"), rect.get("x"), rect.get("y"),
                         rect.get("width"), rect.get("fill"), rect.get("d") or "",
                         show(text.text or "") if text is not None else ""]))


main()
