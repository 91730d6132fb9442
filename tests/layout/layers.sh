#!/bin/sh
# layers.sh - no folder of src/ includes one above it.  The order (README,
# "Hacking") is the pipeline's: what every stage uses at the bottom, the
# front ends and the command line at the top.  Fails, naming file and line,
# on an include that runs the other way.
top=${top_srcdir:-$(dirname "$0")/../..}
ORDER="common parse auth policy record exec validate egress upstream core front cli"

rank() {
	i=0
	for d in $ORDER; do
		[ "$d" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
	echo -1
}

bad=0
n=0
cd "$top/src" || exit 99
for f in */*.c */*.h */*/*.c; do
	[ -f "$f" ] || continue
	from=${f%%/*}
	rf=$(rank "$from")
	[ "$rf" -ge 0 ] || { echo "not ok - $f: folder '$from' is not in the order"; bad=1; continue; }
	grep -n '^#include "[a-z_]*/' "$f" | while IFS=: read -r line inc; do
		to=$(printf '%s' "$inc" | sed 's/#include "\([a-z_]*\)\/.*/\1/')
		rt=$(rank "$to")
		if [ "$rt" -lt 0 ] || [ "$rt" -gt "$rf" ]; then
			echo "not ok - src/$f:$line: $from includes $to, above it ($ORDER)"
		fi
	done > /tmp/layers.$$
	if [ -s /tmp/layers.$$ ]; then
		cat /tmp/layers.$$
		bad=1
	fi
	n=$((n + 1))
done
rm -f /tmp/layers.$$
if [ $bad -eq 0 ]; then
	echo "ok 1 - $n files of src/ include only folders at or below their own"
	echo "1 passed, 0 failed"
	exit 0
fi
echo "0 passed, 1 failed"
exit 1
