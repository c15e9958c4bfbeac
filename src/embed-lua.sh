#!/bin/sh
# embed-lua.sh EMBED DIR FILE... > OUTPUT
#
# Writes C source holding each FILE (a path relative to DIR, such as
# gerewrite.lua) as a byte array made by EMBED (lib/embed.sh), followed by
# the table lge_embedded (src/lge.h) that lists them by path.
set -e
if test $# -lt 2; then
	echo "usage: embed-lua.sh EMBED DIR FILE... > OUTPUT" >&2
	exit 2
fi
embed=$1
dir=$2
shift 2
n=0
for f in "$@"; do
	${SHELL:-/bin/sh} "$embed" "lge_lua_$n" "$dir/$f"
	n=`expr $n + 1`
done
echo '#include "lge.h"'
echo 'const struct lge_embedded lge_embedded[] = {'
n=0
for f in "$@"; do
	echo "	{\"$f\", lge_lua_${n}_data, $(wc -c < "$dir/$f" | tr -d ' \t')},"
	n=`expr $n + 1`
done
echo '	{NULL, NULL, 0},'
echo '};'
