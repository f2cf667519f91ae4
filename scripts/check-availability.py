"""Refuses any use of an API newer than the agent's declared deployment targets (Agent/Package.swift's `platforms`).

    python3 scripts/check-availability.py PACKAGE_SWIFT -- SWIFTC_ARGUMENTS… [-- SWIFTC_ARGUMENTS…]…

The Linux compiler does not enforce iOS or macOS availability, but the declarations it reads carry Apple's
annotations: the standard library's and Foundation's (`@available(macOS 13.0, iOS 16.0, …) func firstRange`), and
the Apple SDK stand-in's (Tests/AppleSDKStandIn, annotated as Apple's SDK is). This check joins the two:
  1. every public declaration of the modules the sources may use, with its availability, from
     `swift-symbolgraph-extract`;
  2. every declaration and type the sources reference, from the type-checked syntax tree
     (`swiftc -dump-ast -dump-ast-format json` with SWIFTC_ARGUMENTS: one module's, each group after `--`).
A reference whose iOS or macOS version is newer than the target is refused, unless it stands where that version is
already known: inside `if #available`, after `guard #available`, or in a declaration marked `@available`.
Exits 1 listing each use (file:line, the declaration, the version it needs), 0 when there is none.
"""
import json, os, re, subprocess, sys, tempfile

# The modules whose declarations the agent's sources can reach, by the names their symbol graphs carry.
MODULES = [
    "Swift", "_StringProcessing", "_Concurrency", "Foundation", "FoundationEssentials", "FoundationNetworking",
    "Dispatch", "os", "UserNotifications", "UserNotificationsUI", "UIKit", "BackgroundTasks",
]
DOMAINS = {"iOS": "iOS", "macOS": "macOS"}


def deployment_targets(manifest):
    """`.iOS(.v15), .macOS(.v12)` → {"iOS": (15, 0), "macOS": (12, 0)}."""
    text = open(manifest).read()
    targets = {}
    for domain, version in re.findall(r"\.(iOS|macOS)\(\.v(\d+(?:_\d+)?)\)", text):
        parts = tuple(int(p) for p in version.split("_"))
        targets[domain] = parts if len(parts) == 2 else (parts[0], 0)
    if not targets:
        sys.exit(f"{manifest}: no iOS or macOS platform found")
    return targets


def version_tuple(value):
    if isinstance(value, dict):
        return (int(value.get("major", 0)), int(value.get("minor", 0)))
    parts = str(value).split(".")
    return (int(parts[0]), int(parts[1]) if len(parts) > 1 else 0)


def newer_symbols(targets, include_paths, target_triple):
    """USR → (name, {domain: version}) of each public declaration newer than a target, and the qualified names of the
    newer types (`Swift.Duration`), as a demangled type names them (the standard library's own modules as `Swift`)."""
    newer, types = {}, {}
    with tempfile.TemporaryDirectory() as out:
        for module in MODULES:
            command = ["swift-symbolgraph-extract", "-module-name", module, "-target", target_triple,
                       "-output-dir", out, "-minimum-access-level", "public"]
            for path in include_paths:
                command += ["-I", path]
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        graphs = [name for name in os.listdir(out) if name.endswith(".symbols.json")]
        if not any(name.startswith("Swift") for name in graphs):
            sys.exit("swift-symbolgraph-extract gave no symbol graph of the standard library: the check cannot run")
        older_titles = set()
        requirements = set()
        for name in graphs:
            graph = json.load(open(os.path.join(out, name)))
            requirements.update(r["source"] for r in graph.get("relationships", [])
                                if r.get("kind") in ("requirementOf", "optionalRequirementOf"))
            for symbol in graph.get("symbols", []):
                needs = {}
                for entry in symbol.get("availability", []):
                    domain = DOMAINS.get(entry.get("domain"))
                    if domain in targets and "introduced" in entry:
                        version = version_tuple(entry["introduced"])
                        if version > targets[domain]:
                            needs[domain] = version
                usr = symbol["identifier"]["precise"]
                title = ".".join(symbol.get("pathComponents", [])) or symbol.get("names", {}).get("title", usr)
                if not needs:
                    older_titles.add(title)
                if needs:
                    newer[usr] = (title, needs)
                    if symbol.get("kind", {}).get("identifier") in ("swift.struct", "swift.class", "swift.enum",
                                                                     "swift.protocol", "swift.typealias"):
                        module = re.split(r"[@.]", name)[0]
                        types[f"{module}.{title}"] = (title, needs)
                        types[f"Swift.{title}"] = (title, needs)
    # A protocol requirement added later beside an older default implementation of the same name (Swift 6 made
    # `FixedWidthInteger.&*` a requirement): on an older system the call binds to the default, which is there.
    for usr in [usr for usr in newer if usr in requirements and newer[usr][0] in older_titles]:
        del newer[usr]
    return newer, types


def syntax_trees(arguments):
    result = subprocess.run(["swiftc", "-dump-ast", "-dump-ast-format", "json"] + arguments,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    text = result.stdout + result.stderr
    decoder, at, trees = json.JSONDecoder(), 0, []
    while True:
        start = text.find('{"_kind":"source_file"', at)
        if start < 0:
            break
        tree, at = decoder.raw_decode(text, start)
        trees.append(tree)
    if result.returncode != 0 or not trees:
        sys.stderr.write(result.stderr[-4000:])
        sys.exit("the sources did not type-check: the availability check cannot run")
    return trees


def raised(floor, specs):
    """The floor once `#available` or `@available` has guaranteed these (domain, version) pairs."""
    floor = dict(floor)
    for domain, version in specs:
        if domain in DOMAINS and version > floor.get(domain, (0, 0)):
            floor[domain] = version
    return floor


def available_specs(node):
    """The (domain, version) pairs of every `#available` query under `node`."""
    found = []
    def visit(value):
        if isinstance(value, dict):
            if value.get("_kind") == "availability_spec" and value.get("domain") in DOMAINS and "version" in value:
                found.append((value["domain"], version_tuple(value["version"])))
            for child in value.values():
                visit(child)
        elif isinstance(value, list):
            for child in value:
                visit(child)
    visit(node)
    return found


def uses(tree, targets, newer, types):
    """Each (offset, name, needs) of a newer declaration referenced where its version is not known to hold."""
    found = []

    def check(needs, floor):
        return {d: v for d, v in needs.items() if v > max(targets[d], floor.get(d, (0, 0)))}

    def visit(node, floor, offset):
        if isinstance(node, list):
            for child in node:
                floor = visit(child, floor, offset)
            return floor
        if not isinstance(node, dict):
            return floor
        offset = node.get("range", {}).get("start", offset)
        attributes = [a for a in node.get("attrs", []) if isinstance(a, dict) and a.get("_kind") == "available_attr"]
        inner = raised(floor, [(a["domain"], version_tuple(a["introduced"])) for a in attributes
                               if "introduced" in a and a.get("domain") in DOMAINS])
        usr = node.get("decl_usr")
        if usr in newer:
            name, needs = newer[usr]
            if missing := check(needs, inner):
                found.append((offset, name, missing))
        for key in ("type", "interface_type", "type_usr"):
            mangled = node.get(key)
            if isinstance(mangled, str) and mangled.startswith("$s"):
                typed.append((offset, mangled, inner))
        kind = node.get("_kind")
        if kind == "if_stmt":
            visit(node.get("conditions"), inner, offset)
            visit(node.get("then_stmt"), raised(inner, available_specs(node.get("conditions"))), offset)
            visit(node.get("else_stmt"), inner, offset)
            return floor
        if kind == "brace_stmt":
            # `guard #available` guarantees its version to the statements after it in the same block.
            current = inner
            for element in node.get("elements", []):
                visit(element, current, offset)
                if isinstance(element, dict) and element.get("_kind") == "guard_stmt":
                    current = raised(current, available_specs(element.get("conditions")))
            return floor
        for key, child in node.items():
            if key != "attrs" and isinstance(child, (dict, list)):
                visit(child, inner, offset)
        return floor

    typed = []
    visit(tree, {}, 0)
    # A type named only in a signature or an annotation is no declaration reference: its mangled name is read.
    names = demangled(sorted({mangled for _, mangled, _ in typed}))
    pattern = re.compile(r"(?<![\w.])(" + "|".join(re.escape(t) for t in types) + r")(?![\w])") if types else None
    for offset, mangled, floor in typed:
        for qualified in (pattern.findall(names.get(mangled, "")) if pattern else []):
            name, needs = types[qualified]
            if missing := check(needs, floor):
                found.append((offset, name, missing))
    return found


def demangled(mangled_names):
    """Mangled type names → their demangled text, in one call of `swift demangle`."""
    if not mangled_names:
        return {}
    result = subprocess.run(["swift", "demangle", "--compact"], input="\n".join(mangled_names) + "\n",
                            stdout=subprocess.PIPE, text=True, check=True)
    return dict(zip(mangled_names, result.stdout.split("\n")))


def line_of(path, offset):
    with open(path, "rb") as file:
        return file.read(offset).count(b"\n") + 1


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit(__doc__)
    targets = deployment_targets(sys.argv[1])
    groups = [[]]
    for argument in sys.argv[3:]:
        if argument == "--":
            groups.append([])
        else:
            groups[-1].append(argument)
    include_paths = sorted({g[i + 1] for g in groups for i, a in enumerate(g[:-1]) if a == "-I"})
    triple = subprocess.run(["swiftc", "-print-target-info"], stdout=subprocess.PIPE, text=True)
    triple = json.loads(triple.stdout)["target"]["triple"]
    newer, types = newer_symbols(targets, include_paths, triple)
    wanted = ", ".join(f"{d} {v[0]}.{v[1]}" for d, v in sorted(targets.items()))
    refused = set()
    for tree in (tree for arguments in groups for tree in syntax_trees(arguments)):
        path = tree["filename"]
        for offset, name, missing in uses(tree, targets, newer, types):
            needs = ", ".join(f"{d} {v[0]}.{v[1]}" for d, v in sorted(missing.items()))
            refused.add(f"{os.path.relpath(path)}:{line_of(path, offset)}: {name} needs {needs}")
    for line in sorted(refused):
        print(line)
    if refused:
        print(f"{len(refused)} uses of APIs newer than the deployment targets ({wanted}): guard them with "
              f"`if #available`, or use an older API")
        sys.exit(1)
    print(f"no API newer than {wanted} is used ({len(newer)} newer declarations known)")


if __name__ == "__main__":
    main()
