#!/bin/sh
# layers-rules.sh: t/layers.sh on small trees made here: it looks at the
# files git tracks (or, outside a checkout, those on disk but the build's
# own), never at build output, and its rules cover lib/'s subfolders.
SRC=${GE_TOP_SRCDIR:-.}
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-layers-rules.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$SRC/t/testlib.sh"

# tree DIR: a project of two layers, lib/exec/ a folder of layer 1
tree() {
	mkdir -p "$1/lib/exec" "$1/src" "$1/t" "$1/doc"
	cp "$SRC/t/layers.sh" "$SRC/t/testlib.sh" "$1/t/"
	cat > "$1/doc/hacking.md" <<'E'
| Layer | Files |
|-------|-------|
| 0 base | base |
| 1 exec | exec/kernel, exec/exec |
E
	printf '#include "base.h"\nint base(void)\n{\n\treturn 0;\n}\n' \
		> "$1/lib/base.c"
	printf 'int base(void);\n' > "$1/lib/base.h"
	printf '#include "base.h"\n' > "$1/lib/exec/kernel.h"
	printf '#include "exec/kernel.h"\nint k(void)\n{\n\treturn 1;\n}\n' \
		> "$1/lib/exec/exec.c"
	printf 'int main(void)\n{\n\treturn 0;\n}\n' > "$1/src/main.c"
	printf 'CLEANFILES += lib/opdefs_data.c src/apihelp_data.c\n' \
		> "$1/Makefile.am"
}
# build_output DIR: what an in-tree build leaves: big, in no table
build_output() {
	awk 'BEGIN { for (i = 0; i < 2000; i++) print "int x" i ";" }' \
		> "$1/lib/opdefs_data.c"
	cp "$1/lib/opdefs_data.c" "$1/src/apihelp_data.c"
}
layers() { # layers DIR: runs its t/layers.sh, objects built in DIR
	run env GE_TOP_SRCDIR="$1" GE_TOP_BUILDDIR="$1" sh "$1/t/layers.sh"
}

# outside a checkout (a release tarball built in place)
tree "$T/tar"
layers "$T/tar"
is_rc 0 "a clean tree passes"
build_output "$T/tar"
layers "$T/tar"
is_rc 0 "the build's output (Makefile.am's CLEANFILES) is not the project's"

# a file of a subfolder of lib/ missing from the table
printf 'int v;\n' > "$T/tar/lib/exec/xtensor.c"
layers "$T/tar"
is_rc 1 "a file of lib/exec/ not in the table fails"
has "$T/out" "lib/exec/xtensor.c" "the file is named"
rm "$T/tar/lib/exec/xtensor.c"

# a header of lib/exec/ (layer 1) included from layer 0
printf '#include "exec/kernel.h"\n' >> "$T/tar/lib/base.h"
layers "$T/tar"
is_rc 1 "an include going up to lib/exec/ fails"
has "$T/out" "lib/base.h (layer 0) includes exec/kernel.h (layer 1)" \
	"the include is named"
printf 'int base(void);\n' > "$T/tar/lib/base.h"

# a long function and a long file in lib/exec/
awk 'BEGIN { print "int f(void)"; print "{"
	for (i = 0; i < 200; i++) print "\t;"; print "}" }' \
	> "$T/tar/lib/exec/exec.c"
layers "$T/tar"
has "$T/out" "lib/exec/exec.c: f is 203 lines" "a long function of lib/exec/ is found"
awk 'BEGIN { for (i = 0; i < 1900; i++) print "int y" i ";" }' \
	> "$T/tar/lib/exec/exec.c"
layers "$T/tar"
has "$T/out" "lib/exec/exec.c: 1900 lines" "a long file of lib/exec/ is found"
rm "$T/tar/lib/exec/exec.c"

# a private header of lib/exec/
printf '/* k_impl.h: included by nothing */\n' > "$T/tar/lib/exec/k_impl.h"
printf '#include "exec/k_impl.h"\n' > "$T/tar/lib/exec/exec.c"
sed 's/exec\/exec |/exec\/exec, exec\/k_impl |/' "$T/tar/doc/hacking.md" \
	> "$T/h" && mv "$T/h" "$T/tar/doc/hacking.md"
layers "$T/tar"
has "$T/out" "lib/exec/exec.c includes exec/k_impl.h, whose comment does not name it" \
	"a private header of lib/exec/ names who includes it"

# calls, from the objects: lib/x.o beside lib/x.c (GE_TOP_BUILDDIR)
CC=${CC:-cc}
if "$CC" --version >/dev/null 2>&1 && nm --version >/dev/null 2>&1; then
	rm -f "$T/tar/lib/exec/k_impl.h"
	sed 's/, exec\/k_impl |/ |/' "$T/tar/doc/hacking.md" > "$T/h" &&
		mv "$T/h" "$T/tar/doc/hacking.md"
	objs() { # objs DIR: compiles every .c of DIR/lib in place
		for c in "$1"/lib/*.c "$1"/lib/exec/*.c; do
			"$CC" -c -I"$1/lib" -o "${c%.c}.o" "$c" ||
				echo "# $CC failed on $c"
		done
	}
	printf '#include "base.h"\nint ge_base(void)\n{\n\treturn 0;\n}\n' \
		> "$T/tar/lib/base.c"
	printf 'int ge_base(void);\nint ge_k(void)\n{\n\treturn ge_base();\n}\n' \
		> "$T/tar/lib/exec/exec.c"
	objs "$T/tar"
	layers "$T/tar"
	is_rc 0 "objects whose calls go down pass"
	grep -q '^ok [0-9]* - no file of lib/ calls a file of a layer above' "$T/out"
	ok $? "the calls are checked when the objects are there"
	# base (layer 0) calls ge_k of exec/exec (layer 1): up, and a loop
	printf 'int ge_k(void);\nint ge_base(void)\n{\n\treturn ge_k();\n}\n' \
		> "$T/tar/lib/base.c"
	objs "$T/tar"
	layers "$T/tar"
	is_rc 1 "a call up to lib/exec/ fails, though no include goes up"
	has "$T/out" "lib/base.c (layer 0) calls ge_k of lib/exec/exec.c (layer 1)" \
		"the call is named with both files and their layers"
	grep -q '^ok [0-9]* - every symbol lib/ exports starts with ge_' "$T/out"
	ok $? "names with the prefix pass"
	# an exported name without the prefix; a static one may keep it
	printf 'int k_short(void)\n{\n\treturn 1;\n}\nstatic int k_local(void)\n{\n\treturn 2;\n}\nint ge_k(void)\n{\n\treturn k_local();\n}\n' \
		> "$T/tar/lib/exec/exec.c"
	printf '#include "base.h"\nint ge_base(void)\n{\n\treturn 0;\n}\n' \
		> "$T/tar/lib/base.c"
	objs "$T/tar"
	layers "$T/tar"
	has "$T/out" "lib/exec/exec.c: k_short" \
		"a function lib/ exports without ge_ is named"
	if grep -q "k_local" "$T/out"; then s=1; else s=0; fi
	ok $s "a static function keeps its short name"
	# a variable of a higher layer read from below is a use as well
	printf 'extern int ge_kv;\nint ge_base(void)\n{\n\treturn ge_kv;\n}\n' \
		> "$T/tar/lib/base.c"
	printf 'int ge_kv = 1;\nint ge_k(void)\n{\n\treturn 1;\n}\n' \
		> "$T/tar/lib/exec/exec.c"
	objs "$T/tar"
	layers "$T/tar"
	has "$T/out" "lib/base.c (layer 0) calls ge_kv of lib/exec/exec.c (layer 1)" \
		"reading a variable of a higher layer fails"
	# a loop in src/: main.c calls cmd.c, which calls back into main.c
	printf 'int helper(void);\nint cmd(void)\n{\n\treturn helper();\n}\n' \
		> "$T/tar/src/cmd.c"
	printf 'int cmd(void);\nint helper(void)\n{\n\treturn 0;\n}\nint main(void)\n{\n\treturn cmd();\n}\n' \
		> "$T/tar/src/main.c"
	for c in "$T/tar"/src/*.c; do "$CC" -c -o "${c%.c}.o" "$c"; done
	layers "$T/tar"
	grep -q '^not ok [0-9]* - no call loop between files of src/' "$T/out"
	ok $? "a call loop between files of src/ fails"
	has "$T/out" "src/cmd.c" "the loop's files are named"
	# the bindings count as one: l_module.c and l_op.c may call each other
	mv "$T/tar/src/cmd.c" "$T/tar/src/l_op.c"
	sed 's/cmd/lop/g' "$T/tar/src/l_op.c" > "$T/h" && mv "$T/h" "$T/tar/src/l_op.c"
	printf 'int lop(void);\nint helper(void)\n{\n\treturn lop();\n}\n' \
		> "$T/tar/src/l_module.c"
	printf 'int main(void)\n{\n\treturn 0;\n}\n' > "$T/tar/src/main.c"
	rm -f "$T/tar"/src/*.o
	for c in "$T/tar"/src/*.c; do "$CC" -c -o "${c%.c}.o" "$c"; done
	layers "$T/tar"
	grep -q '^ok [0-9]* - no call loop between files of src/' "$T/out"
	ok $? "calls between the bindings (src/l_*.c) are no loop"
	rm -f "$T/tar"/src/*.o "$T/tar/src/l_op.c" "$T/tar/src/l_module.c"
	# the same call with no objects: the check says it did not run
	rm -f "$T/tar"/lib/*.o "$T/tar"/lib/exec/*.o
	layers "$T/tar"
	has "$T/out" "# SKIP no objects of lib/" \
		"without objects the calls are skipped, visibly"
	printf '#include "base.h"\nint ge_base(void)\n{\n\treturn 0;\n}\n' \
		> "$T/tar/lib/base.c"
	rm -f "$T/tar/lib/exec/exec.c"
else
	echo "ok 99 # SKIP no C compiler or no nm: calls not tried"
fi

# in a git checkout: what git tracks, whatever else lies there
if git --version >/dev/null 2>&1; then
	tree "$T/git"
	(cd "$T/git" && git init -q && git add . &&
	 git -c user.name=t -c user.email=t@t commit -q -m tree) ||
		echo "# git init failed"
	build_output "$T/git"
	printf 'CLEANFILES =\n' > "$T/git/Makefile.am"
	layers "$T/git"
	is_rc 0 "a checkout with build output (untracked) passes"
	printf 'int v;\n' > "$T/git/lib/exec/xtensor.c"
	(cd "$T/git" && git add lib/exec/xtensor.c)
	layers "$T/git"
	is_rc 1 "a tracked file of lib/exec/ not in the table fails"
else
	echo "ok 99 # SKIP git is not installed"
fi

echo "1..$n"
exit $failed
