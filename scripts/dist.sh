#!/usr/bin/env bash
# make dist: the release binary (Swift's standard library and Foundation linked in, `make release`) packaged the
# Debian way, for a host with no Swift: dist/pushtrace_VERSION-REVISION_amd64.deb and a .tar.gz of the same files.
#
#   /usr/bin/pushtrace                         the binary, stripped
#   /usr/share/man/man1/pushtrace*.1.gz        a page per command (swift-argument-parser's generate-manual)
#   /lib/systemd/system/pushtrace.service      deploy/pushtrace.service, ExecStart at /usr/bin
#   /etc/pushtrace/pushtrace.env               a conffile, mode 0600: where PUSHTRACE_DB lives
#   /usr/share/doc/pushtrace/examples/         the nginx site, the Prometheus rules, the Grafana dashboard
#
# postinst adds the system user and /var/lib/pushtrace (0700) and enables the unit without starting it: the unit's
# ExecCondition skips it until the env file names the store. An upgrade restarts a running server; remove stops it;
# purge removes the config and never the data. The dependencies are dpkg-shlibdeps's. DIST_REVISION (default 1)
# is the Debian revision, DIST_DIR (default dist) the output folder. Run after `make release`.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.build/release/pushtrace
tool=.build/release/generate-manual
[ -x "$bin" ] && [ -x "$tool" ] || { echo "dist: make release first (it builds $bin and $tool)"; exit 1; }
version=$(sed -n 's/.*static let release = "\(.*\)"/\1/p' Sources/PushTraceRecords/PushTraceVersion.swift)
[ -n "$version" ] || { echo "dist: no release version in Sources/PushTraceRecords/PushTraceVersion.swift"; exit 1; }
revision=${DIST_REVISION:-1}
name=pushtrace_${version}-${revision}_amd64
out=${DIST_DIR:-dist}
# Dates from the last commit, so that two builds of one revision make the same files.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
day=$(date -u -d "@$SOURCE_DATE_EPOCH" +%F)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/$name
mkdir -p "$root/DEBIAN" "$out"

echo "dist: $name"
install -D -m 755 "$bin" "$root/usr/bin/pushtrace"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/pushtrace"
"$root/usr/bin/pushtrace" --version >/dev/null

# One page per command, named as git's are (pushtrace-token-create(1)): the tool names them with dots.
mkdir -p "$work/man" "$root/usr/share/man/man1"
"$tool" "$bin" --multi-page --date "$day" --authors "pushtrace maintainers" --output-directory "$work/man" >/dev/null
for page in "$work/man"/*.1; do
  base=$(basename "$page" .1)
  target=$root/usr/share/man/man1/${base//./-}.1
  # NAME gives the dashed name (whatis and `man pushtrace-why` find it), SYNOPSIS the command as typed, the
  # references the dashed names; blank lines become paragraph breaks (mdoc warns on them).
  python3 - "$page" "$target" "$base" <<'PY'
import re, sys
source, target, base = sys.argv[1:]
dashed, spaced = base.replace(".", "-"), base.replace(".", " ")
lines, named = [], False
for line in open(source).read().splitlines():
    if line.startswith(".Dt "):
        line = f".Dt {dashed.upper()} 1"
    elif line.startswith(".Nm ") and not named:
        line, named = f".Nm {dashed}", True
    elif line == ".Nm":
        line = f'.Nm "{spaced}"'
    elif line.startswith(".Xr "):
        line = re.sub(r"^\.Xr (\S+)", lambda m: ".Xr " + m.group(1).replace(".", "-"), line)
    elif line == "":
        line = ".Pp"
    lines.append(line)
open(target, "w").write("\n".join(lines) + "\n")
PY
  gzip -9n "$target"
done

# The unit as docs/deploy.md describes it, with the packaged binary's path and without the manual install steps.
install -d "$root/lib/systemd/system"
{
  echo "# pushtrace serve as a sandboxed systemd service (installed by the pushtrace package)."
  echo "# Every setting comes from /etc/pushtrace/pushtrace.env; /usr/share/doc/pushtrace/README.Debian says what next."
  sed -n '/^\[Unit\]/,$p' deploy/pushtrace.service | sed 's|^ExecStart=/usr/local/bin/pushtrace |ExecStart=/usr/bin/pushtrace |'
} > "$root/lib/systemd/system/pushtrace.service"
chmod 644 "$root/lib/systemd/system/pushtrace.service"
grep -q '^ExecStart=/usr/bin/pushtrace serve$' "$root/lib/systemd/system/pushtrace.service" \
  || { echo "dist: deploy/pushtrace.service's ExecStart is not /usr/local/bin/pushtrace serve"; exit 1; }

# The env file with the store left to the operator: until PUSHTRACE_DB is set, the unit's ExecCondition skips it.
install -d "$root/etc/pushtrace"
sed 's|^PUSHTRACE_DB=/var/lib/pushtrace/pushtrace.sqlite|#PUSHTRACE_DB=/var/lib/pushtrace/pushtrace.sqlite|' \
  deploy/pushtrace.env > "$root/etc/pushtrace/pushtrace.env"
chmod 600 "$root/etc/pushtrace/pushtrace.env"
grep -q '^#PUSHTRACE_DB=/var/lib' "$root/etc/pushtrace/pushtrace.env" || { echo "dist: deploy/pushtrace.env changed shape"; exit 1; }
echo /etc/pushtrace/pushtrace.env > "$root/DEBIAN/conffiles"

doc=$root/usr/share/doc/pushtrace
install -d "$doc/examples"
install -m 644 deploy/nginx.conf "$doc/examples/nginx.conf"
install -m 644 dashboards/pushtrace-rules.yml dashboards/pushtrace-dashboard.json "$doc/examples/"
install -m 644 deploy/README.Debian "$doc/README.Debian"
install -m 644 deploy/copyright "$doc/copyright"
printf '%s\n' "pushtrace ($version-$revision) unstable; urgency=medium" "" \
  "  * Release $version, built from $(git rev-parse --short HEAD 2>/dev/null || echo 'an unknown revision')." "" \
  " -- pushtrace maintainers <pushtrace@users.noreply.github.com>  $(date -u -R -d "@$SOURCE_DATE_EPOCH")" \
  | gzip -9n > "$doc/changelog.Debian.gz"
chmod 644 "$doc/changelog.Debian.gz"

for script in postinst prerm postrm; do install -m 755 "deploy/debian/$script" "$root/DEBIAN/$script"; done
install -D -m 644 deploy/debian/lintian-overrides "$root/usr/share/lintian/overrides/pushtrace"

# The libraries the binary links, as dpkg-shlibdeps finds them (it wants a debian/control beside it).
mkdir -p "$work/shlibs/debian"
printf 'Source: pushtrace\n\nPackage: pushtrace\nArchitecture: amd64\n' > "$work/shlibs/debian/control"
depends=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$root/usr/bin/pushtrace" | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "dist: dpkg-shlibdeps found no dependencies"; exit 1; }
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<EOF
Package: pushtrace
Version: $version-$revision
Architecture: amd64
Maintainer: pushtrace maintainers <pushtrace@users.noreply.github.com>
Installed-Size: $size
Depends: adduser, $depends
Section: net
Priority: optional
Homepage: https://github.com/pushtrace/pushtrace
Description: push-notification observability for iOS apps
 pushtrace shows why an iOS rich notification's custom card did not show. The
 agent inside the app and its notification extensions records each step; this
 server ingests those bundles and the backend's sent and APNs events,
 correlates them per notification, and answers "why" from the command line, the
 HTTP API and plain-text weekly reports, with alerts and Prometheus metrics.
 .
 The store is an embedded SQLite file by default, or PostgreSQL.
EOF
# Every file but the conffile, whose checksum dpkg keeps itself.
(cd "$root" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) \
  > "$root/DEBIAN/md5sums"

rm -f "$out/$name.deb" "$out/$name.tar.gz"
dpkg-deb --root-owner-group -Zxz --build "$root" "$out/$name.deb" >/dev/null
tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner -C "$root" --exclude=./DEBIAN \
  -czf "$out/$name.tar.gz" .
ls -l "$out/$name.deb" "$out/$name.tar.gz"
echo "dist: Depends: adduser, $depends"

# DIST_LINTIAN=no skips lintian: make dist-test's second build of the same files.
[ "${DIST_LINTIAN:-yes}" = yes ] || exit 0
command -v lintian >/dev/null || { echo "dist: lintian is missing (make dist-deps)"; exit 1; }
echo "dist: lintian $out/$name.deb"
lintian --fail-on error "$out/$name.deb"
echo "dist: lintian reports no error"
