#!/usr/bin/env bash
# Builds tessera's release binaries: static (CGO_ENABLED=0), without local
# paths (-trimpath), stamped with the version, for linux/amd64 and
# linux/arm64, into dist/ with their SHA-256 sums in dist/SHA256SUMS
# (sha256sum's format: cd dist && sha256sum -c SHA256SUMS).
#
#   scripts/release.sh [VERSION]
#
# VERSION defaults to the tag on HEAD (without a leading v), else
# version.go's version with the short commit (0.1.0-dev+abc1234). DIST
# sets another output directory; PLATFORMS="os/arch ..." other targets.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

version=${1:-}
if [ -z "$version" ]; then
	if tag=$(git describe --tags --exact-match 2>/dev/null); then
		version=${tag#v}
	else
		version=$(sed -n 's/^var version = "\(.*\)"$/\1/p' version.go)
		[ -n "$version" ] || { echo "release: no version in version.go" >&2; exit 1; }
		if commit=$(git rev-parse --short HEAD 2>/dev/null); then
			version="$version+$commit"
		fi
	fi
fi
case $version in
*[!A-Za-z0-9.+_-]* | "") echo "release: version \"$version\" has characters a file name should not" >&2; exit 1 ;;
esac

dist=${DIST:-dist}
platforms=${PLATFORMS:-linux/amd64 linux/arm64}
mkdir -p "$dist"
rm -f "$dist"/tessera-* "$dist/SHA256SUMS"
for p in $platforms; do
	os=${p%/*} arch=${p#*/}
	out="tessera-$version-$os-$arch"
	echo "build $out"
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false \
		-ldflags "-s -w -buildid= -X main.version=$version" -o "$dist/$out" .
done
(cd "$dist" && sha256sum tessera-* >SHA256SUMS)
cat "$dist/SHA256SUMS"
