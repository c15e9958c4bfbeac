# browser.sh: headless Chromium for the tests of the page of `diff --html`,
# sourced after testlib.sh (needs $T).
#   need_browser           when chromium (or $GE_CHROMIUM) is absent: the
#                          rest of the test is one skipped test, the plan
#                          counts the tests already run, and the script
#                          exits with their status
#   dump_dom PAGE [HASH]   the DOM after the page's script ran, in $T/dom
#   page_text ID           the text of the element of that id in $T/dom,
#                          entities decoded, in $T/ID
BROWSER=${GE_CHROMIUM:-chromium}
need_browser() {
	if ! command -v "$BROWSER" >/dev/null 2>&1; then
		# a plan of 1..0 after tests that ran is a TAP error
		n=$((n + 1))
		echo "ok $n # SKIP the page in a browser: no $BROWSER (./bootstrap --browser-deps)"
		echo "1..$n"
		exit $failed
	fi
}
dump_dom() {
	"$BROWSER" --headless --disable-gpu --no-sandbox --no-first-run \
		--user-data-dir="$T/chromium" --virtual-time-budget=5000 \
		--dump-dom "file://$1$2" >"$T/dom" 2>"$T/browser.err"
}
page_text() {
	sed -n "/<[a-z]* id=\"$1\"/{
		:a
		/id=\"$1\"[^<]*<\//!{
			N
			ba
		}
		p
		q
	}" "$T/dom" |
		sed -e "s/.*<[a-z]* id=\"$1\"[^>]*>//" -e 's/<\/.*//' \
		    -e 's/&lt;/</g' -e 's/&gt;/>/g' -e 's/&quot;/"/g' \
		    -e 's/&amp;/\&/g' | sed '/^$/d' >"$T/$1"
}
