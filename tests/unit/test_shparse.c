/*
 * test_shparse.c - the bash-grammar parser: table-driven cases by family
 * (each input with the tree it must give, rendered by shparse_ser.h, or
 * the error it must give), literal/part queries, refusals of NUL bytes,
 * invalid UTF-8, oversized and over-deep input, large inputs of every
 * shape, and a differential check against the real bash: what the parser accepts,
 * `bash -n` must accept too.
 */
#include "agconfig.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include <cmocka.h>

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#include "parse/shparse.h"
#include "shparse_ser.h"

struct tcase {
	const char	*in;
	size_t		 len;
	const char	*want;	/* the rendering, or "!E@OFF msg" / "!I@OFF msg" */
};

#define T(in, want)	{ in, sizeof(in) - 1, want }

static const struct tcase quoting_cases[] = {
	T("echo s''h",
	    "[echo sh]"),
	T("echo \\s\\h",
	    "[echo sh]"),
	T("echo \"s\"h",
	    "[echo sh]"),
	T("echo $'\\x73'h",
	    "[echo sh]"),
	T("echo $'\\163'h",
	    "[echo sh]"),
	T("echo 'a b'  \"c d\"",
	    "[echo 'a b' 'c d']"),
	T("echo 'it'\\''s'",
	    "[echo 'it's']"),
	T("echo \"a\\\"b\"",
	    "[echo 'a\"b']"),
	T("echo \"a\\$b\"",
	    "[echo 'a$b']"),
	T("echo \"a\\qb\"",
	    "[echo 'a\\qb']"),
	T("echo \"a\\\\b\"",
	    "[echo 'a\\b']"),
	T("echo 'a\\nb'",
	    "[echo 'a\\nb']"),
	T("echo \\\"",
	    "[echo '\"']"),
	T("echo \\'",
	    "[echo ''']"),
	T("echo \\$x",
	    "[echo '$x']"),
	T("echo \\`id\\`",
	    "[echo '`id`']"),
	T("echo $'a\\tb'",
	    "[echo 'a\tb']"),
	T("echo $'\\e[0m'",
	    "[echo '\033[0m']"),
	T("echo $'\\u00e9'",
	    "[echo \303\251]"),
	T("echo $'\\U0001F600'",
	    "[echo \360\237\230\200]"),
	T("echo $'\\cA'",
	    "[echo \001]"),
	T("echo $'\\c?'",
	    "[echo \177]"),
	T("echo $'\\x4g'",
	    "[echo \004g]"),
	T("echo $'\\q'",
	    "[echo '\\q']"),
	T("echo $'\\x'",
	    "[echo '\\x']"),
	T("echo $'ab\\x00cd'",
	    "[echo ab]"),
	T("echo $'\\0'",
	    "[echo '']"),
	T("echo $'\\'quoted\\''",
	    "[echo ''quoted'']"),
	T("echo $'\\\"'",
	    "[echo '\"']"),
	T("echo $'a\\\\b'",
	    "[echo 'a\\b']"),
	T("echo $'\\?'",
	    "[echo ?]"),
	T("echo $\"hello $USER\"",
	    "[echo hello ${USER}]"),
	T("echo \"$\"",
	    "[echo '$']"),
	T("echo $",
	    "[echo '$']"),
	T("echo a$",
	    "[echo 'a$']"),
	T("echo \"a$\"b",
	    "[echo 'a$b']"),
	T("echo ''",
	    "[echo '']"),
	T("echo \"\"",
	    "[echo '']"),
	T("echo '' \"\"",
	    "[echo '' '']"),
	T("echo a\"b\"'c'$'d'",
	    "[echo abcd]"),
	T("echo \"a;b|c&d\"",
	    "[echo 'a;b|c&d']"),
	T("echo ';' '|' '&&'",
	    "[echo ';' '|' '&&']"),
	T("echo \"$(echo \";\")\"",
	    "[echo $([echo ';'])]"),
	T("echo '$(rm -rf /)'",
	    "[echo '$(rm -rf /)']"),
	T("echo \"'\"",
	    "[echo ''']"),
	T("echo '\"'",
	    "[echo '\"']"),
	T("ec\\\nho hi",
	    "[echo hi]"),
	T("echo a\\\nb",
	    "[echo ab]"),
	T("echo 'a\\\nb'",
	    "[echo 'a\\\nb']"),
	T("echo \"a\\\nb\"",
	    "[echo ab]"),
	T("echo $'a\\\nb'",
	    "[echo 'a\\\nb']"),
	T("echo \\\\",
	    "[echo '\\']"),
	T("echo \"\\`\"",
	    "[echo '`']"),
	T("e'c'ho x",
	    "[echo x]"),
	T("\\echo x",
	    "[echo x]"),
	T("\"echo\" x",
	    "[echo x]"),
	T("/bin/e\"c\"ho x",
	    "[/bin/echo x]"),
	T("echo \"h\303\251llo w\303\266rld\"",
	    "[echo 'h\303\251llo w\303\266rld']"),
	T("echo \346\227\245\346\234\254",
	    "[echo \346\227\245\346\234\254]"),
	T("echo \\\303\251",
	    "[echo \303\251]"),
};

static const struct tcase params_cases[] = {
	T("echo $x",
	    "[echo ${x}]"),
	T("echo $x_y1",
	    "[echo ${x_y1}]"),
	T("echo $1 $10",
	    "[echo ${1} ${1}0]"),
	T("echo $@ $* $# $? $- $$ $! $0",
	    "[echo ${@} ${*} ${#} ${?} ${-} ${$} ${!} ${0}]"),
	T("echo ${x}",
	    "[echo ${x}]"),
	T("echo ${10}",
	    "[echo ${10}]"),
	T("echo ${#x}",
	    "[echo ${#x}]"),
	T("echo ${#}",
	    "[echo ${#}]"),
	T("echo ${#a[@]}",
	    "[echo ${#a[@]}]"),
	T("echo ${!x}",
	    "[echo ${!x}]"),
	T("echo ${!}",
	    "[echo ${!}]"),
	T("echo ${!p*} ${!p@}",
	    "[echo ${!p*} ${!p@}]"),
	T("echo ${!a[@]}",
	    "[echo ${!a[@]}]"),
	T("echo ${a[1]}",
	    "[echo ${a[1]}]"),
	T("echo ${a[$i+1]}",
	    "[echo ${a[${i}+1]}]"),
	T("echo ${a[$(id)]}",
	    "[echo ${a[$([id])]}]"),
	T("echo ${x:-def}",
	    "[echo ${x:-def}]"),
	T("echo ${x-def}",
	    "[echo ${x-def}]"),
	T("echo ${x:=d}",
	    "[echo ${x:=d}]"),
	T("echo ${x=d}",
	    "[echo ${x=d}]"),
	T("echo ${x:?err}",
	    "[echo ${x:?err}]"),
	T("echo ${x?}",
	    "[echo ${x?''}]"),
	T("echo ${x:+alt}",
	    "[echo ${x:+alt}]"),
	T("echo ${x+alt}",
	    "[echo ${x+alt}]"),
	T("echo ${x#*/}",
	    "[echo ${x#*/}]"),
	T("echo ${x##*/}",
	    "[echo ${x##*/}]"),
	T("echo ${x%.*}",
	    "[echo ${x%.*}]"),
	T("echo ${x%%.*}",
	    "[echo ${x%%.*}]"),
	T("echo ${x/a/b}",
	    "[echo ${x/a/b}]"),
	T("echo ${x//a/b}",
	    "[echo ${x//a/b}]"),
	T("echo ${x/#a/b}",
	    "[echo ${x/#a/b}]"),
	T("echo ${x/%a/b}",
	    "[echo ${x/%a/b}]"),
	T("echo ${x/a}",
	    "[echo ${x/a}]"),
	T("echo ${x^}",
	    "[echo ${x^''}]"),
	T("echo ${x^^}",
	    "[echo ${x^^''}]"),
	T("echo ${x,}",
	    "[echo ${x,''}]"),
	T("echo ${x,,}",
	    "[echo ${x,,''}]"),
	T("echo ${x^^[a-c]}",
	    "[echo ${x^^'[a-c]'}]"),
	T("echo ${x:1}",
	    "[echo ${x:1}]"),
	T("echo ${x:1:2}",
	    "[echo ${x:1:2}]"),
	T("echo ${x: -1}",
	    "[echo ${x:' -1'}]"),
	T("echo ${x:$(id):1}",
	    "[echo ${x:$([id]):1}]"),
	T("echo ${x@Q}",
	    "[echo ${x@Q}]"),
	T("echo ${x@P}",
	    "[echo ${x@P}]"),
	T("echo ${x@a}",
	    "[echo ${x@a}]"),
	T("echo ${x:-$(id)}",
	    "[echo ${x:-$([id])}]"),
	T("echo ${x:-`id`}",
	    "[echo ${x:-`[id]`}]"),
	T("echo ${x:-${y:-${z}}}",
	    "[echo ${x:-${y:-${z}}}]"),
	T("echo \"${x:-a b}\"",
	    "[echo ${x:-'a b'}]"),
	T("echo ${x:-\"a b\"}",
	    "[echo ${x:-'a b'}]"),
	T("echo \"${x:-\"q\"}\"",
	    "[echo ${x:-q}]"),
	T("echo ${x:-'s'}",
	    "[echo ${x:-s}]"),
	T("echo ${x:-~}",
	    "[echo ${x:-<~>}]"),
	T("echo ${x:-{a}}",
	    "[echo ${x:-'{a'}}]"),
	T("echo ${x:-a{b}c}",
	    "[echo ${x:-'a{b'}c}]"),
	T("echo ${x:-\\}}",
	    "[echo ${x:-'}'}]"),
	T("echo \"${x//\\\"/}\"",
	    "[echo ${x//'\"'/''}]"),
	T("echo ${@:2}",
	    "[echo ${@:2}]"),
	T("echo ${*}",
	    "[echo ${*}]"),
	T("echo ${x:-a}b${y}c",
	    "[echo ${x:-a}b${y}c]"),
	T("echo $xy",
	    "[echo ${xy}]"),
	T("echo ${x}y",
	    "[echo ${x}y]"),
	T("echo $HO\\\nME",
	    "[echo ${HOME}]"),
	T("echo \"$x\"",
	    "[echo ${x}]"),
	T("echo \"${x}\"",
	    "[echo ${x}]"),
	T("echo \"$1$2\"",
	    "[echo ${1}${2}]"),
	T("echo \"${x/\\//y}\"",
	    "[echo ${x/'\\/'/y}]"),
	T("echo \"${x-\\}}\"",
	    "[echo ${x-'}'}]"),
	T("echo \"${x:-\\}\"; echo \"}\"",
	    "[echo ${x:-'}; echo '}]"),
	T("echo \"${a[\\]]}\"",
	    "[echo ${a['\\]']}]"),
};

static const struct tcase cmdsub_cases[] = {
	T("echo $(id)",
	    "[echo $([id])]"),
	T("echo $(id -u)",
	    "[echo $([id -u])]"),
	T("echo \"$(id)\"",
	    "[echo $([id])]"),
	T("echo $(echo $(id))",
	    "[echo $([echo $([id])])]"),
	T("echo $( (id) )",
	    "[echo $(( [id] ))]"),
	T("echo $(case x in a) echo a;; esac)",
	    "[echo $(case x in a) [echo a] ;; esac)]"),
	T("echo $(case x in (a) echo a;; esac)",
	    "[echo $(case x in a) [echo a] ;; esac)]"),
	T("echo $(echo \")\")",
	    "[echo $([echo ')'])]"),
	T("echo $(echo ')')",
	    "[echo $([echo ')'])]"),
	T("echo $(echo a # comment )\n)",
	    "[echo $([echo a])]"),
	T("echo $(\nid\n)",
	    "[echo $([id])]"),
	T("echo $(a; b && c | d)",
	    "[echo $([a]; [b] && [c] | [d])]"),
	T("echo $(echo a &)",
	    "[echo $([echo a] &)]"),
	T("echo `id`",
	    "[echo `[id]`]"),
	T("echo \"`id`\"",
	    "[echo `[id]`]"),
	T("echo `echo \\`id\\``",
	    "[echo `[echo `[id]`]`]"),
	T("echo `echo \\\\$HOME`",
	    "[echo `[echo '$HOME']`]"),
	T("echo `echo \\$x`",
	    "[echo `[echo ${x}]`]"),
	T("echo `echo \\\"hi\\\"`",
	    "[echo `[echo '\"hi\"']`]"),
	T("echo \"`echo \\\"hi\\\"`\"",
	    "[echo `[echo hi]`]"),
	T("echo `echo '$(x)'`",
	    "[echo `[echo '$(x)']`]"),
	T("echo `echo a\\\nb`",
	    "[echo `[echo ab]`]"),
	T("echo `a | b`",
	    "[echo `[a] | [b]`]"),
	T("echo ``",
	    "[echo ``]"),
	T("echo $()",
	    "[echo $()]"),
	T("echo $(cat <<EOF\nhi $x\nEOF\n)",
	    "[echo $([cat <<EOF{hi ${x}\n}])]"),
	T("echo `cat <<EOF\nhi\nEOF\n`",
	    "[echo `[cat <<EOF{'hi\n'}]`]"),
	T("x=$(id)",
	    "[x=$([id])]"),
	T("x=`id`",
	    "[x=`[id]`]"),
	T("$(id)",
	    "[$([id])]"),
	T("`id`",
	    "[`[id]`]"),
	T("$(id) arg",
	    "[$([id]) arg]"),
	T("echo a$(b)c",
	    "[echo a$([b])c]"),
	T("echo $(for i in 1; do echo; done)",
	    "[echo $(for i in 1 do [echo] done)]"),
	T("echo $(if a; then b; fi)",
	    "[echo $(if [a] then [b] fi)]"),
	T("echo $(f() { :; })",
	    "[echo $(function f { [:] })]"),
	T("echo $({ a; })",
	    "[echo $({ [a] })]"),
};

static const struct tcase arith_cases[] = {
	T("echo $((1+2))",
	    "[echo $((1+2))]"),
	T("echo $(( x * (y + 1) ))",
	    "[echo $((' x * (y + 1) '))]"),
	T("echo $((x++))",
	    "[echo $((x++))]"),
	T("echo $(($(id) + 1))",
	    "[echo $(($([id]) + 1))]"),
	T("echo $((`id` + 1))",
	    "[echo $((`[id]` + 1))]"),
	T("echo $((a[$(id)]))",
	    "[echo $((a[$([id])]))]"),
	T("echo $((${x:-1} + 2))",
	    "[echo $((${x:-1} + 2))]"),
	T("echo $[1+2]",
	    "[echo $((1+2))]"),
	T("echo $[a[1]]",
	    "[echo $(('a[1]'))]"),
	T("echo \"$((1+2))\"",
	    "[echo $((1+2))]"),
	T("((x = 1 + 2))",
	    "(('x = 1 + 2'))"),
	T("((a[$(id)]++))",
	    "((a[$([id])]++))"),
	T("(( x ))",
	    "((' x '))"),
	T("((x)) && echo",
	    "((x)) && [echo]"),
	T("echo $((16#ff))",
	    "[echo $((16#ff))]"),
	T("echo $(( \")\" ))",
	    "[echo $((' ) '))]"),
	T("echo $(( ')' ))",
	    "[echo $((' ) '))]"),
	T("echo $(( 1 + `echo 1)` ))",
	    "!E@20 syntax error near unexpected token `)'"),
	T("echo $((\n1\n))",
	    "[echo $(('\n1\n'))]"),
	T("echo $(())",
	    "[echo $((''))]"),
	T("(( ))",
	    "((' '))"),
	T("echo $((1+\\)))",
	    "[echo $(('1+\\)'))]"),
	T("echo $(( \"\\)\" ))",
	    "[echo $((' \\) '))]"),
	T("echo $[ a\\] ]",
	    "[echo $((' a\\] '))]"),
};

static const struct tcase procsub_cases[] = {
	T("diff <(ls a) <(ls b)",
	    "[diff <([ls a]) <([ls b])]"),
	T("tee >(wc -l)",
	    "[tee >([wc -l])]"),
	T("cat < <(ls)",
	    "[cat <<([ls])]"),
	T("echo a<(ls)",
	    "[echo a<([ls])]"),
	T("x=<(ls)",
	    "[x=<([ls])]"),
	T("cat <( <(ls) )",
	    "[cat <([<([ls])])]"),
	T("diff <(case x in a) ls;; esac) f",
	    "[diff <(case x in a) [ls] ;; esac) f]"),
	T("echo ${x:-<(id)}",
	    "[echo ${x:-<([id])}]"),
	T("echo ${x#>(id)}",
	    "[echo ${x#>([id])}]"),
	T("echo \"${x:-<(id)}\"",
	    "[echo ${x:-'<(id)'}]"),
	T("echo >(( case x in *) :;; esac ))",
	    "!E@5 unbalanced parentheses inside <((...)): write <( ( ... ) )"),
	T("echo >(( case x in (*) :;; esac ))",
	    "[echo >(( case x in <G:*>) [:] ;; esac ))]"),
	T("echo <((a);(b))",
	    "[echo <(( [a] ); ( [b] ))]"),
	T("echo <( (a) )",
	    "[echo <(( [a] ))]"),
};

static const struct tcase expand_cases[] = {
	T("echo {a,b}",
	    "[echo <B:{a,b}>a,b]"),
	T("echo x{a,b}y",
	    "[echo x<B:{a,b}>a,by]"),
	T("echo {1..3}",
	    "[echo <B:{1..3}>1..3]"),
	T("echo {a..e..2}",
	    "[echo <B:{a..e..2}>a..e..2]"),
	T("echo {-1..3}",
	    "[echo <B:{-1..3}>-1..3]"),
	T("echo {}",
	    "[echo '{}']"),
	T("echo {x}",
	    "[echo '{x}']"),
	T("echo {a..}",
	    "[echo '{a..}']"),
	T("echo {1..3..}",
	    "[echo '{1..3..}']"),
	T("echo {a,{b}}",
	    "[echo <B:{a,{b}}>a,{b}]"),
	T("echo a{b,c{d,e}}",
	    "[echo a<B:{b,c{d,e}}>b,c<B:{d,e}>d,e]"),
	T("echo '{a,b}'",
	    "[echo '{a,b}']"),
	T("echo {a,b",
	    "[echo '{a,b']"),
	T("echo {a\"b,c\"}",
	    "[echo '{ab,c}']"),
	T("echo \\{a,b}",
	    "[echo '{a,b}']"),
	T("echo {,}",
	    "[echo <B:{,}>,]"),
	T("echo {$x,b}",
	    "[echo <B:{$x,b}>${x},b]"),
	T("echo {a,$(id)}",
	    "[echo <B:{a,$(id)}>a,$([id])]"),
	T("{rm,-rf,x}",
	    "[<B:{rm,-rf,x}>rm,-rf,x]"),
	T("find . -exec rm {} +",
	    "[find . -exec rm '{}' +]"),
	T("find . -exec rm {} \\;",
	    "[find . -exec rm '{}' ';']"),
	T("echo ~",
	    "[echo <~>]"),
	T("echo ~/x",
	    "[echo <~>/x]"),
	T("echo ~root/x",
	    "[echo <~root>/x]"),
	T("echo ~+ ~- ~+1",
	    "[echo <~+> <~-> <~+1>]"),
	T("echo x~",
	    "[echo x~]"),
	T("echo \"~\"",
	    "[echo ~]"),
	T("echo '~'",
	    "[echo ~]"),
	T("echo ~\"x\"",
	    "[echo ~x]"),
	T("echo \\~",
	    "[echo ~]"),
	T("echo ~$x",
	    "[echo ~${x}]"),
	T("echo a=~/x:~/y",
	    "[echo a=<~>/x:<~>/y]"),
	T("x=~/a:~/b",
	    "[x=<~>/a:<~>/b]"),
	T("echo a:~",
	    "[echo a:~]"),
	T("cd ~bob",
	    "[cd <~bob>]"),
	T("~/bin/tool",
	    "[<~>/bin/tool]"),
	T("echo *",
	    "[echo <G:*>]"),
	T("echo *.c",
	    "[echo <G:*>.c]"),
	T("echo ?",
	    "[echo <G:?>]"),
	T("echo a?b",
	    "[echo a<G:?>b]"),
	T("echo [abc]",
	    "[echo <G:[>abc]]"),
	T("echo [a-z]*",
	    "[echo <G:[>a-z]<G:*>]"),
	T("echo [",
	    "[echo '[']"),
	T("echo ]",
	    "[echo ']']"),
	T("echo [a",
	    "[echo '[a']"),
	T("echo \"*\"",
	    "[echo *]"),
	T("echo '*'",
	    "[echo *]"),
	T("echo \\*",
	    "[echo *]"),
	T("echo a*\"b\"",
	    "[echo a<G:*>b]"),
	T("[ -f x ]",
	    "['[' -f x ']']"),
	T("/bin/l?",
	    "[/bin/l<G:?>]"),
	T("ls /e*/pass*",
	    "[ls /e<G:*>/pass<G:*>]"),
	T("x=*",
	    "[x=*]"),
	T("echo x=*",
	    "[echo x=<G:*>]"),
};

static const struct tcase lists_cases[] = {
	T("a; b",
	    "[a]; [b]"),
	T("a;b",
	    "[a]; [b]"),
	T("a & b",
	    "[a] &; [b]"),
	T("a &",
	    "[a] &"),
	T("a&&b",
	    "[a] && [b]"),
	T("a || b",
	    "[a] || [b]"),
	T("a && b || c && d",
	    "[a] && [b] || [c] && [d]"),
	T("a\nb",
	    "[a]; [b]"),
	T("a\n\nb\n",
	    "[a]; [b]"),
	T("a | b | c",
	    "[a] | [b] | [c]"),
	T("a |& b",
	    "[a] |& [b]"),
	T("a |\nb",
	    "[a] | [b]"),
	T("a &&\nb",
	    "[a] && [b]"),
	T("a ||\n\nb",
	    "[a] || [b]"),
	T("! a",
	    "! [a]"),
	T("! a | b",
	    "! [a] | [b]"),
	T("! ! a",
	    "[a]"),
	T("time a",
	    "time [a]"),
	T("time -p a | b",
	    "time -p [a] | [b]"),
	T("time ! a",
	    "! time [a]"),
	T("! time a",
	    "! time [a]"),
	T("a | time b",
	    "[a] | [time b]"),
	T("time",
	    "time []"),
	T("!",
	    "! []"),
	T("a; b &; c",
	    "!E@6 syntax error near unexpected token `;'"),
	T("# only a comment",
	    ""),
	T("",
	    ""),
	T("   ",
	    ""),
	T("\n\n",
	    ""),
	T("a # comment",
	    "[a]"),
	T("a #c\nb",
	    "[a]; [b]"),
	T("echo a#b",
	    "[echo a#b]"),
	T("echo a #b;c",
	    "[echo a]"),
	T("a;#c",
	    "[a]"),
	T("echo \\#x",
	    "[echo #x]"),
	T("echo '#x'",
	    "[echo #x]"),
	T("a & b & c &",
	    "[a] &; [b] &; [c] &"),
	T("a && b &",
	    "[a] && [b] &"),
	T("true\015",
	    "[true\015]"),
	T("a\015b",
	    "[a\015b]"),
	T("time -- ls",
	    "time [ls]"),
	T("time -p -- ls",
	    "time -p [ls]"),
	T("time -p -p ls",
	    "time -p [-p ls]"),
	T("a | ! b",
	    "!E@4 syntax error near unexpected token `!'"),
};

static const struct tcase compound_cases[] = {
	T("( a; b )",
	    "( [a]; [b] )"),
	T("(a)",
	    "( [a] )"),
	T("( a ) > f",
	    "( [a] ) >f"),
	T("{ a; }",
	    "{ [a] }"),
	T("{ a; b; } 2>&1",
	    "{ [a]; [b] } 2>&1"),
	T("{ a\n}",
	    "{ [a] }"),
	T("{(a)}",
	    "{ ( [a] ) }"),
	T("{ { a; }; }",
	    "{ { [a] } }"),
	T("if a; then b; fi",
	    "if [a] then [b] fi"),
	T("if a\nthen b\nfi",
	    "if [a] then [b] fi"),
	T("if a; then b; else c; fi",
	    "if [a] then [b] else [c] fi"),
	T("if a; then b; elif c; then d; elif e; then f; else g; fi",
	    "if [a] then [b] elif [c] then [d] elif [e] then [f] else [g] fi"),
	T("if a; then :; fi > log",
	    "if [a] then [:] fi >log"),
	T("if ! a; then b; fi",
	    "if ! [a] then [b] fi"),
	T("while a; do b; done",
	    "while [a] do [b] done"),
	T("until a; do b; done",
	    "until [a] do [b] done"),
	T("while read l; do echo \"$l\"; done < f",
	    "while [read l] do [echo ${l}] done <f"),
	T("while a\ndo\nb\ndone",
	    "while [a] do [b] done"),
	T("for x in a b c; do echo $x; done",
	    "for x in a b c do [echo ${x}] done"),
	T("for x; do :; done",
	    "for x do [:] done"),
	T("for x do :; done",
	    "for x do [:] done"),
	T("for x in; do :; done",
	    "for x in do [:] done"),
	T("for x\nin a\ndo :\ndone",
	    "for x in a do [:] done"),
	T("for x in a; { b; }",
	    "for x in a do { [b] } done"),
	T("for x in $(ls) *.c; do :; done",
	    "for x in $([ls]) <G:*>.c do [:] done"),
	T("for ((i=0; i<3; i++)); do :; done",
	    "for ((i=0;' i<3';' i++')) do [:] done"),
	T("for ((;;)); do break; done",
	    "for (('';'';'')) do [break] done"),
	T("for ((i=0;i<3;i++)) { :; }",
	    "for ((i=0;'i<3';i++)) do { [:] } done"),
	T("select x in a b; do break; done",
	    "select x in a b do [break] done"),
	T("select x; do :; done",
	    "select x do [:] done"),
	T("case x in a) b;; esac",
	    "case x in a) [b] ;; esac"),
	T("case x in a|b) c;; *) d;; esac",
	    "case x in a|b) [c] ;; <G:*>) [d] ;; esac"),
	T("case x in (a) b;; esac",
	    "case x in a) [b] ;; esac"),
	T("case x in a) b;& c) d;;& e) f; esac",
	    "case x in a) [b] ;& c) [d] ;;& e) [f]  esac"),
	T("case x in\na)\nb\n;;\nesac",
	    "case x in a) [b] ;; esac"),
	T("case x in esac",
	    "case x in esac"),
	T("case x in a) ;; esac",
	    "case x in a) ;; esac"),
	T("case $x in \"a b\") c;; esac",
	    "case ${x} in 'a b') [c] ;; esac"),
	T("case x in a) case y in b) c;; esac;; esac",
	    "case x in a) case y in b) [c] ;; esac ;; esac"),
	T("case x in a) echo esac;; esac",
	    "case x in a) [echo esac] ;; esac"),
	T("case x in *) ;; esac > f",
	    "case x in <G:*>) ;; esac >f"),
	T("case x in [ab]) ;; esac",
	    "case x in <G:[>ab]) ;; esac"),
	T("[[ -f x ]]",
	    "[[ -f x ]]"),
	T("[[ a == b ]]",
	    "[[ a == b ]]"),
	T("[[ a = b* ]]",
	    "[[ a = b<G:*> ]]"),
	T("[[ a != \"b*\" ]]",
	    "[[ a != b* ]]"),
	T("[[ a =~ ^a.*$ ]]",
	    "[[ a =~ '^a.*$' ]]"),
	T("[[ a =~ (a|b) ]]",
	    "[[ a =~ <G:(a|b)>a|b ]]"),
	T("[[ a < b ]]",
	    "[[ a '<' b ]]"),
	T("[[ a > b ]]",
	    "[[ a '>' b ]]"),
	T("[[ -n $x && -z $y ]]",
	    "[[ -n ${x} '&&' -z ${y} ]]"),
	T("[[ ! -d x || ( a == b ) ]]",
	    "[[ ! -d x '||' '(' a == b ')' ]]"),
	T("[[ $x -eq 1 ]]",
	    "[[ ${x} -eq 1 ]]"),
	T("[[ a\n== a ]]",
	    "!E@4 unexpected token `newline' inside a [[ ]] test"),
	T("[[ a &&\n b ]]",
	    "[[ a '&&' b ]]"),
	T("[[ -f ]]",
	    "!E@6 unexpected argument `]]' to conditional unary operator"),
	T("[[ $(id) ]]",
	    "[[ $([id]) ]]"),
	T("[[ a == @(a|b) ]]",
	    "[[ a == <G:@(a|b)>a|b ]]"),
	T("[[ a == !(x) ]]",
	    "[[ a == <G:!(x)>x ]]"),
	T("[[ x ]] && y",
	    "[[ x ]] && [y]"),
	T("[[ ( a ) ]]",
	    "[[ '(' a ')' ]]"),
	T("[[ -v a[$(id)] ]]",
	    "[[ -v a<G:[>$([id])] ]]"),
	T("f() { a; }",
	    "function f { [a] }"),
	T("f () { a; }",
	    "function f { [a] }"),
	T("f()\n{\na\n}",
	    "function f { [a] }"),
	T("f() ( a )",
	    "function f ( [a] )"),
	T("f() if a; then b; fi",
	    "function f if [a] then [b] fi"),
	T("f() { a; } > log",
	    "function f { [a] } >log"),
	T("function f { a; }",
	    "function f { [a] }"),
	T("function f() { a; }",
	    "function f { [a] }"),
	T("function f\n{ a; }",
	    "function f { [a] }"),
	T("f() [[ a ]]",
	    "function f [[ a ]]"),
	T("f() ((1))",
	    "function f ((1))"),
	T("f() for x; do :; done",
	    "function f for x do [:] done"),
	T("coproc a",
	    "coproc [a]"),
	T("coproc a b c",
	    "coproc [a b c]"),
	T("coproc { a; }",
	    "coproc { [a] }"),
	T("coproc N { a; }",
	    "coproc[N] { [a] }"),
	T("coproc N ( a )",
	    "coproc[N] ( [a] )"),
	T("coproc N while a; do b; done",
	    "coproc[N] while [a] do [b] done"),
	T("if a; then (b; c) | d; fi",
	    "if [a] then ( [b]; [c] ) | [d] fi"),
	T("while a; do if b; then c; fi; done",
	    "while [a] do if [b] then [c] fi done"),
	T("x=1; if [ $x ]; then :; fi",
	    "[x=1]; if ['[' ${x} ']'] then [:] fi"),
	T("[[ -f b\n]]",
	    "[[ -f b ]]"),
	T("[[ a == b\n]]",
	    "[[ a == b ]]"),
	T("[[\na ]]",
	    "[[ a ]]"),
	T("coproc foo time",
	    "coproc [foo time]"),
	T("coproc foo if :; then :; fi",
	    "coproc[foo] if [:] then [:] fi"),
	T("[[ !\n a ]]",
	    "[[ ! a ]]"),
	T("[[ (\n a ) ]]",
	    "[[ '(' a ')' ]]"),
	T("[[ ! -f x ]]",
	    "[[ ! -f x ]]"),
};

static const struct tcase assign_cases[] = {
	T("A=1",
	    "[A=1]"),
	T("A=1 cmd",
	    "[A=1 cmd]"),
	T("A=1 B=2 cmd arg",
	    "[A=1 B=2 cmd arg]"),
	T("A= cmd",
	    "[A='' cmd]"),
	T("A+=x",
	    "[A+=x]"),
	T("a[1]=x",
	    "[a[1]=x]"),
	T("a[$i]=x",
	    "[a[${i}]=x]"),
	T("a[$(id)]=x",
	    "[a[$([id])]=x]"),
	T("a[1 + 2]=x",
	    "[a['1 + 2']=x]"),
	T("a[i]+=1",
	    "[a[i]+=1]"),
	T("a=(1 2 3)",
	    "[a=(1 2 3)]"),
	T("a=()",
	    "[a=()]"),
	T("a+=(x)",
	    "[a+=(x)]"),
	T("a=([k]=v [j]=\"w x\")",
	    "[a=('[k]=v' '[j]=w x')]"),
	T("a=(1\n2 # c\n3)",
	    "[a=(1 2 3)]"),
	T("a=($(id) `x`)",
	    "[a=($([id]) `[x]`)]"),
	T("A=\"$(id)\"",
	    "[A=$([id])]"),
	T("A=$x$y",
	    "[A=${x}${y}]"),
	T("A=*",
	    "[A=*]"),
	T("A={a,b}",
	    "[A='{a,b}']"),
	T("A=~/x",
	    "[A=<~>/x]"),
	T("cmd A=1",
	    "[cmd A=1]"),
	T("echo a=b",
	    "[echo a=b]"),
	T("export A=1",
	    "[export A=1]"),
	T("export A=$(id)",
	    "[export A=$([id])]"),
	T("declare -a a=(1 2)",
	    "[declare -a 'a=(1 2)']"),
	T("local x=1",
	    "[local x=1]"),
	T("A=1 export B=2",
	    "[A=1 export B=2]"),
	T("readonly a[1 2]=3",
	    "[readonly a<G:[>1 2]=3]"),
	T("A=1 >f",
	    "[A=1 >f]"),
	T(">f A=1 cmd",
	    "[A=1 cmd >f]"),
	T("A=1 $(id)",
	    "[A=1 $([id])]"),
	T("1A=x",
	    "[1A=x]"),
	T("A-B=x",
	    "[A-B=x]"),
	T("a[1]",
	    "[a<G:[>1]]"),
	T("a[1 2]",
	    "[a<G:[>1 2]]"),
	T("A=1 if",
	    "[A=1 if]"),
	T("x=(a)y",
	    "!E@5 syntax error near unexpected token `y'"),
	T("A\\=1 cmd",
	    "[A=1 cmd]"),
	T("\"A\"=1",
	    "[A=1]"),
	T("A='1 2' cmd",
	    "[A='1 2' cmd]"),
	T("PATH=/tmp:$PATH ls",
	    "[PATH=/tmp:${PATH} ls]"),
	T("LD_PRELOAD=/x.so ls",
	    "[LD_PRELOAD=/x.so ls]"),
	T("IFS=, read a b",
	    "[IFS=, read a b]"),
};

static const struct tcase redir_cases[] = {
	T("echo >f",
	    "[echo >f]"),
	T("echo > f",
	    "[echo >f]"),
	T("echo >>f",
	    "[echo >>f]"),
	T("echo >|f",
	    "[echo >|f]"),
	T("cat <f",
	    "[cat <f]"),
	T("cat <>f",
	    "[cat <>f]"),
	T("cat 0<f",
	    "[cat 0<f]"),
	T("echo 2>f",
	    "[echo 2>f]"),
	T("echo 2>>f",
	    "[echo 2>>f]"),
	T("echo 1>&2",
	    "[echo 1>&2]"),
	T("echo >&2",
	    "[echo >&2]"),
	T("echo 2>&1",
	    "[echo 2>&1]"),
	T("echo 2>&-",
	    "[echo 2>&-]"),
	T("echo <&-",
	    "[echo <&-]"),
	T("echo 3<&0",
	    "[echo 3<&0]"),
	T("echo 3>&1-",
	    "[echo 3>&1-]"),
	T("echo >&f",
	    "[echo &>f]"),
	T("echo 2>&f",
	    "[echo 2&>f]"),
	T("echo &>f",
	    "[echo &>f]"),
	T("echo &>>f",
	    "[echo &>>f]"),
	T("echo {fd}>f",
	    "[echo {fd}>f]"),
	T("exec {fd}<&-",
	    "[exec {fd}<&-]"),
	T("echo {a}>f {b}<g",
	    "[echo {a}>f {b}<g]"),
	T("echo {1}>f",
	    "[echo '{1}' >f]"),
	T("cat <<<word",
	    "[cat <<<word]"),
	T("cat <<< \"a b\"",
	    "[cat <<<'a b']"),
	T("cat <<<$(id)",
	    "[cat <<<$([id])]"),
	T("echo >$f",
	    "[echo >${f}]"),
	T("echo >\"$f\"",
	    "[echo >${f}]"),
	T("echo >$(id)",
	    "[echo >$([id])]"),
	T("echo > ~/f",
	    "[echo ><~>/f]"),
	T("echo >f*",
	    "[echo >f<G:*>]"),
	T("echo 2 >f",
	    "[echo 2 >f]"),
	T("echo 2>f 3",
	    "[echo 3 2>f]"),
	T("echo a>b>c",
	    "[echo a >b >c]"),
	T("echo 12>f",
	    "[echo 12>f]"),
	T("echo 99999999999>f",
	    "[echo 99999999999 >f]"),
	T(">f",
	    "[>f]"),
	T(">f echo",
	    "[echo >f]"),
	T("echo >f <g 2>h",
	    "[echo >f <g 2>h]"),
	T("echo 2&>f",
	    "[echo 2 &>f]"),
	T("echo a&>f",
	    "[echo a &>f]"),
	T("<f cat",
	    "[cat <f]"),
	T("echo >& 2",
	    "[echo >&2]"),
	T("cat < <(ls)",
	    "[cat <<([ls])]"),
	T("echo >(wc)",
	    "[echo >([wc])]"),
	T("echo >\nf",
	    "!E@6 syntax error near unexpected token `newline'"),
	T("echo >;",
	    "!E@6 syntax error near unexpected token `;'"),
	T("echo <",
	    "!E@6 syntax error near unexpected token `newline'"),
	T("echo 2>",
	    "!E@7 syntax error near unexpected token `newline'"),
	T("echo &>",
	    "!E@7 syntax error near unexpected token `newline'"),
	T("echo >&",
	    "!E@7 syntax error near unexpected token `newline'"),
	T("echo > >",
	    "!E@7 syntax error near unexpected token `>'"),
	T("echo 2>&1 | cat",
	    "[echo 2>&1] | [cat]"),
	T("echo hi >&-x",
	    "[echo hi x >&-]"),
	T("echo hi 2>&-#c",
	    "[echo hi 2>&-]"),
	T("echo <& -",
	    "[echo <&-]"),
	T("cat <<<>(ls)",
	    "[cat <<<>([ls])]"),
	T("cat >|>(ls)",
	    "[cat >|>([ls])]"),
	T("cat >>(ls)",
	    "!E@6 syntax error near unexpected token `('"),
	T("cat 2>>(ls)",
	    "!E@7 syntax error near unexpected token `('"),
};

static const struct tcase heredoc_cases[] = {
	T("cat <<EOF\nhello\nEOF",
	    "[cat <<EOF{'hello\n'}]"),
	T("cat <<EOF\nhello\nEOF\n",
	    "[cat <<EOF{'hello\n'}]"),
	T("cat <<EOF\nhi $USER $(id) `pwd` ${x:-y}\nEOF\n",
	    "[cat <<EOF{hi ${USER} $([id]) `[pwd]` ${x:-y}\n}]"),
	T("cat <<'EOF'\nhi $USER $(id)\nEOF\n",
	    "[cat <<'EOF{'hi $USER $(id)\n'}]"),
	T("cat <<\"EOF\"\n$x\nEOF\n",
	    "[cat <<'EOF{'$x\n'}]"),
	T("cat <<\\EOF\n$x\nEOF\n",
	    "[cat <<'EOF{'$x\n'}]"),
	T("cat <<E\"O\"F\n$x\nEOF\n",
	    "[cat <<'EOF{'$x\n'}]"),
	T("cat <<-EOF\n\t\thi\n\tEOF\n",
	    "[cat <<-EOF{'hi\n'}]"),
	T("cat <<-'EOF'\n\t$x\n\tEOF\n",
	    "[cat <<-'EOF{'$x\n'}]"),
	T("cat <<EOF; echo after\nbody\nEOF\n",
	    "[cat <<EOF{'body\n'}]; [echo after]"),
	T("cat <<A <<B\na\nA\nb\nB\n",
	    "[cat <<A{'a\n'} <<B{'b\n'}]"),
	T("cat <<A; cat <<B\na\nA\nb\nB\n",
	    "[cat <<A{'a\n'}]; [cat <<B{'b\n'}]"),
	T("cat <<EOF | grep x\nbody\nEOF\n",
	    "[cat <<EOF{'body\n'}] | [grep x]"),
	T("cat <<EOF && echo ok\nb\nEOF\n",
	    "[cat <<EOF{'b\n'}] && [echo ok]"),
	T("cat <<EOF\n\nEOF\n",
	    "[cat <<EOF{'\n'}]"),
	T("cat <<EOF\nEOF\n",
	    "[cat <<EOF{''}]"),
	T("cat <<EOF\n EOF\nEOF\n",
	    "[cat <<EOF{' EOF\n'}]"),
	T("cat <<EOF\nEOF \nEOF\n",
	    "[cat <<EOF{'EOF \n'}]"),
	T("cat <<EOF\na\\\nEOF\nEOF\n",
	    "[cat <<EOF{'aEOF\n'}]"),
	T("cat <<EOF\na\\\\\nEOF\n",
	    "[cat <<EOF{'a\\\n'}]"),
	T("cat <<EOF\nE\\\nOF\n",
	    "[cat <<EOF{''}]"),
	T("cat <<'EOF'\na\\\nEOF\n",
	    "[cat <<'EOF{'a\\\n'}]"),
	T("cat <<EOF\n\\$x \\\\ \\\" \\a\nEOF\n",
	    "[cat <<EOF{'$x \\ \\\" \\a\n'}]"),
	T("cat <<EOF\n\"$x\"\nEOF\n",
	    "[cat <<EOF{\"${x}\"\n}]"),
	T("cat <<EOF\n'$x'\nEOF\n",
	    "[cat <<EOF{'${x}'\n}]"),
	T("cat <<EOF; echo \"a\nb\"\nbody\nEOF\n",
	    "[cat <<EOF{'body\n'}]; [echo 'a\nb']"),
	T("f() { cat <<EOF\nx\nEOF\n}",
	    "function f { [cat <<EOF{'x\n'}] }"),
	T("if a; then cat <<EOF\nx\nEOF\nfi",
	    "if [a] then [cat <<EOF{'x\n'}] fi"),
	T("echo $(cat <<EOF\nhi\nEOF\n)",
	    "[echo $([cat <<EOF{'hi\n'}])]"),
	T("cat <<EOF\n$(cat <<X\ny\nX\n)\nEOF\n",
	    "[cat <<EOF{$([cat <<X{'y\n'}])\n}]"),
	T("cat <<EOF\n$(\nEOF\n",
	    "!E@10 unexpected end of file while looking for matching `)'"),
	T("cat <<EOF\n`\nEOF\n",
	    "!E@10 unexpected end of file while looking for matching ``'"),
	T("cat <<EOF\n${x\nEOF\n",
	    "!E@10 bad substitution"),
	T("cat << EOF\nx\nEOF\n",
	    "[cat <<EOF{'x\n'}]"),
	T("cat <<$x\nbody\n$x\n",
	    "[cat <<$x{'body\n'}]"),
	T("cat <<EOF\nx\nEOF\necho next",
	    "[cat <<EOF{'x\n'}]; [echo next]"),
	T("cat <<EOF\nx\nEOF",
	    "[cat <<EOF{'x\n'}]"),
	T("cat <<EOF >f\nx\nEOF\n",
	    "[cat <<EOF{'x\n'} >f]"),
	T("cat <<EOF $(echo a\necho b)\nx\nEOF\n",
	    "!E@18 a newline inside $(...) while a here-document is pending is not supported"),
	T("echo $(cat <<EOF)\nhi\nEOF\n",
	    "!E@16 here-document inside $(...) or <(...) must end before the `)'"),
	T("cat <<EOF\n\377\nEOF\n",
	    "[cat <<EOF{'\377\n'}]"),
	/* inside $( ) bash ends the body at "E)" or "E )x" too, so the rest
	 * would run as code: refused (at top level "E)" is plain body text) */
	T("echo $(cat <<E\nE)\nid\n#\nE\n)",
	    "!E@15 here-document line starting with its delimiter `E' inside $(...) is read differently by bash; refused"),
	T("echo $(cat <<-E\n\tE )x\nid\nE\n)",
	    "!E@16 here-document line starting with its delimiter `E' inside $(...) is read differently by bash; refused"),
	T("cat <(cat <<'E'\nE)x\nE\n)",
	    "!E@16 here-document line starting with its delimiter `E' inside $(...) is read differently by bash; refused"),
	T("cat <<E\nE)\nE",
	    "[cat <<E{'E)\n'}]"),
};

static const struct tcase errors_cases[] = {
	T("echo a;;",
	    "!E@6 syntax error near unexpected token `;;'"),
	T(";;",
	    "!E@0 syntax error near unexpected token `;;'"),
	T("fi",
	    "!E@0 syntax error near unexpected token `fi'"),
	T("then",
	    "!E@0 syntax error near unexpected token `then'"),
	T("done",
	    "!E@0 syntax error near unexpected token `done'"),
	T("esac",
	    "!E@0 syntax error near unexpected token `esac'"),
	T("else",
	    "!E@0 syntax error near unexpected token `else'"),
	T("}",
	    "!E@0 syntax error near unexpected token `}'"),
	T(")",
	    "!E@0 syntax error near unexpected token `)'"),
	T("&& a",
	    "!E@0 syntax error near unexpected token `&&'"),
	T("|| a",
	    "!E@0 syntax error near unexpected token `||'"),
	T("| a",
	    "!E@0 syntax error near unexpected token `|'"),
	T("; a",
	    "!E@0 syntax error near unexpected token `;'"),
	T("& a",
	    "!E@0 syntax error near unexpected token `&'"),
	T("a ;;",
	    "!E@2 syntax error near unexpected token `;;'"),
	T("a | | b",
	    "!E@4 syntax error near unexpected token `|'"),
	T("a && && b",
	    "!E@5 syntax error near unexpected token `&&'"),
	T("if a; then fi",
	    "!E@11 syntax error near unexpected token `fi'"),
	T("if then fi",
	    "!E@3 syntax error near unexpected token `then'"),
	T("while do done",
	    "!E@6 syntax error near unexpected token `do'"),
	T("if a; b; fi",
	    "!E@9 syntax error near unexpected token `fi'"),
	T("( )",
	    "!E@2 syntax error near unexpected token `)'"),
	T("{ }",
	    "!E@2 syntax error near unexpected token `}'"),
	T("a (b)",
	    "!E@3 syntax error near unexpected token `b'"),
	T("echo (",
	    "!I@6 syntax error: unexpected end of file"),
	T("f() echo",
	    "!E@4 syntax error near unexpected token `echo'"),
	T("function",
	    "!I@8 syntax error: unexpected end of file"),
	T("a )",
	    "!E@2 syntax error near unexpected token `)'"),
	T("a; )",
	    "!E@3 syntax error near unexpected token `)'"),
	T("(a) b",
	    "!E@4 syntax error near unexpected token `b'"),
	T("{ a; } b",
	    "!E@7 syntax error near unexpected token `b'"),
	T("a |& |",
	    "!E@5 syntax error near unexpected token `|'"),
	T("echo | ! cat",
	    "!E@7 syntax error near unexpected token `!'"),
	T("echo & ;",
	    "!E@7 syntax error near unexpected token `;'"),
	T("echo; ;",
	    "!E@6 syntax error near unexpected token `;'"),
	T("for x-y in a; do :; done",
	    "!E@4 `x-y': not a valid identifier"),
	T("for 1 in a; do :; done",
	    "!E@4 `1': not a valid identifier"),
	T("case x in a) b;; ) esac",
	    "!E@17 syntax error near unexpected token `)'"),
	T("case x in (a b) esac",
	    "!E@13 syntax error near unexpected token `b'"),
	T("case x in @(a)) ;; esac",
	    "!E@11 syntax error near unexpected token `('"),
	T("[[ ]]",
	    "!E@3 syntax error near unexpected token `]]'"),
	T("[[ a b ]]",
	    "!E@5 conditional binary operator expected"),
	T("[[ a == ]]",
	    "!E@8 syntax error near unexpected token `]]'"),
	T("[[ a && ]]",
	    "!E@8 syntax error near unexpected token `]]'"),
	T("[[ ( a ]]",
	    "!E@7 syntax error near unexpected token `]]'"),
	T("[[ a ; ]]",
	    "!E@5 syntax error near unexpected token `;'"),
	T("echo @(a)",
	    "!E@6 syntax error near unexpected token `('"),
	T("echo !(a)",
	    "!E@6 syntax error near unexpected token `('"),
	T("echo ${x y}",
	    "!E@5 bad substitution"),
	T("echo ${#x:-a}",
	    "!E@5 bad substitution"),
	T("echo ${x:}}",
	    "!E@5 bad substitution"),
	T("echo ${}",
	    "!E@5 bad substitution"),
	T("echo ${-x}",
	    "!E@5 bad substitution"),
	T("echo ${x@Z}",
	    "!E@5 bad substitution"),
	T("echo ${ x}",
	    "!E@5 bad substitution"),
	T("echo $((echo a); (echo b))",
	    "!E@14 $(( is not closed by `))'; if a subshell was meant, put a space between the parentheses"),
	T("((echo a); (echo b))",
	    "!E@8 (( is not closed by `))'; if a subshell was meant, put a space between the parentheses"),
	T("a=(1)(2)",
	    "!E@5 syntax error near unexpected token `('"),
	T("a[1]=(x)",
	    "!E@5 syntax error near unexpected token `('"),
	T("for ((i=0;i<1)); do :; done",
	    "!E@13 syntax error: arithmetic expression required"),
	T("for ((;;;)); do :; done",
	    "!E@8 for (( is not closed by `))'; if a subshell was meant, put a space between the parentheses"),
	T("for ((i=$(id);;)); do :; done",
	    "!E@6 command substitution inside for ((...)) is not supported"),
	T("echo >",
	    "!E@6 syntax error near unexpected token `newline'"),
	T("echo 2>",
	    "!E@7 syntax error near unexpected token `newline'"),
	T("cat <<",
	    "!E@6 syntax error near unexpected token `newline'"),
	T("cat <<$'E'\nx\nE\n",
	    "!E@6 here-document delimiter with $'...' or $\"...\" is not supported"),
	T("echo \"${x:-'}'}\"",
	    "!E@11 single quotes inside a double-quoted ${...} are not supported"),
	T("f\\x() { :; }",
	    "!E@0 `f\\x': not a valid function name"),
	T("$f() { :; }",
	    "!E@0 `$f': not a valid function name"),
	T("a=(1 ; 2)",
	    "!E@5 syntax error near unexpected token `;'"),
	T("echo | ;",
	    "!E@7 syntax error near unexpected token `;'"),
	T("in",
	    "!E@0 syntax error near unexpected token `in'"),
	T("]]",
	    "!E@0 syntax error near unexpected token `]]'"),
	T("in a",
	    "!E@0 syntax error near unexpected token `in'"),
	T("echo; in",
	    "!E@6 syntax error near unexpected token `in'"),
	T("a && ]]",
	    "!E@5 syntax error near unexpected token `]]'"),
	T("[[ b\n]]",
	    "!E@4 unexpected token `newline' inside a [[ ]] test"),
	T("[[ a\n== b ]]",
	    "!E@4 unexpected token `newline' inside a [[ ]] test"),
	T("[[ a\n&& b ]]",
	    "!E@4 unexpected token `newline' inside a [[ ]] test"),
	T("coproc foo !",
	    "!E@11 syntax error near unexpected token `!'"),
	T("coproc foo }",
	    "!E@11 syntax error near unexpected token `}'"),
	T("coproc foo then",
	    "!E@11 syntax error near unexpected token `then'"),
	T("[[ a =~ (<(x)) ]]",
	    "!E@9 process substitution inside a [[ ]] pattern is not supported"),
	T("[[ -f ]]",
	    "!E@6 unexpected argument `]]' to conditional unary operator"),
	T("[[ ! -f ]]",
	    "!E@8 unexpected argument `]]' to conditional unary operator"),
	T("[[ a ==\n b ]]",
	    "!E@7 unexpected token `newline' inside a [[ ]] test"),
	T("[[ -f\nb ]]",
	    "!E@5 unexpected token `newline' inside a [[ ]] test"),
	T("[[ a <\n b ]]",
	    "!E@6 unexpected token `newline' inside a [[ ]] test"),
	T("echo $(time D=(e) grep)",
	    "!E@12 an array assignment right after `time' is not supported"),
	T("echo $(( a <<-EOF\n ))",
	    "!E@5 `<<' in an arithmetic expression that spans lines is not supported"),
	T("{ coproc ls }; }",
	    "!E@12 syntax error near unexpected token `}'"),
};

static const struct tcase incomplete_cases[] = {
	T("echo \"abc",
	    "!I@9 unexpected end of file while looking for the end of a double-quoted string"),
	T("echo 'abc",
	    "!I@5 unexpected end of file while looking for matching `''"),
	T("echo \\",
	    "!I@5 unexpected end of file after `\\'"),
	T("a &&",
	    "!I@4 syntax error: unexpected end of file"),
	T("a ||",
	    "!I@4 syntax error: unexpected end of file"),
	T("a |",
	    "!I@3 syntax error: unexpected end of file"),
	T("a |&",
	    "!I@4 syntax error: unexpected end of file"),
	T("if a",
	    "!I@4 syntax error: unexpected end of file"),
	T("if a; then",
	    "!I@10 syntax error: unexpected end of file"),
	T("if a; then b",
	    "!I@12 syntax error: unexpected end of file"),
	T("if a; then b; else",
	    "!I@18 syntax error: unexpected end of file"),
	T("while a",
	    "!I@7 syntax error: unexpected end of file"),
	T("while a; do",
	    "!I@11 syntax error: unexpected end of file"),
	T("until a; do b",
	    "!I@13 syntax error: unexpected end of file"),
	T("for x",
	    "!I@5 syntax error: unexpected end of file"),
	T("for x in a b",
	    "!I@12 syntax error: unexpected end of file"),
	T("for x in a; do",
	    "!I@14 syntax error: unexpected end of file"),
	T("select x in a",
	    "!I@13 syntax error: unexpected end of file"),
	T("case x",
	    "!I@6 syntax error: unexpected end of file"),
	T("case x in",
	    "!I@9 syntax error: unexpected end of file"),
	T("case x in a)",
	    "!I@12 syntax error: unexpected end of file"),
	T("case x in a) b;;",
	    "!I@16 syntax error: unexpected end of file"),
	T("{ a",
	    "!I@3 syntax error: unexpected end of file"),
	T("{ a;",
	    "!I@4 syntax error: unexpected end of file"),
	T("( a",
	    "!I@3 syntax error: unexpected end of file"),
	T("f() {",
	    "!I@5 syntax error: unexpected end of file"),
	T("function f",
	    "!I@10 syntax error: unexpected end of file"),
	T("coproc {",
	    "!I@8 syntax error: unexpected end of file"),
	T("echo $(a",
	    "!I@5 unexpected end of file while looking for matching `)'"),
	T("echo $(",
	    "!I@5 unexpected end of file while looking for matching `)'"),
	T("echo `a",
	    "!I@5 unexpected end of file while looking for matching ``'"),
	T("echo ${x",
	    "!I@5 unexpected end of file while looking for matching `}'"),
	T("echo ${x:-",
	    "!I@10 unexpected end of file while looking for the end of a ${...} expansion"),
	T("echo $((1",
	    "!I@9 unexpected end of file while looking for the end of a nested construct"),
	T("((1",
	    "!I@3 unexpected end of file while looking for the end of a nested construct"),
	T("echo $[1",
	    "!I@8 unexpected end of file while looking for the end of a nested construct"),
	T("echo $'a",
	    "!I@5 unexpected end of file while looking for matching `''"),
	T("echo \"$(a",
	    "!I@6 unexpected end of file while looking for matching `)'"),
	T("cat <<EOF",
	    "!I@9 here-document not terminated (wanted `EOF')"),
	T("cat <<EOF\nx",
	    "!I@11 here-document not terminated (wanted `EOF')"),
	T("cat <<EOF\nx\nEO",
	    "!I@14 here-document not terminated (wanted `EOF')"),
	T("a=(1",
	    "!I@0 unexpected end of file while looking for matching `)'"),
	T("a=(",
	    "!I@0 unexpected end of file while looking for matching `)'"),
	T("[[ a",
	    "!I@4 unexpected end of file in [[ ... ]]"),
	T("[[ a ==",
	    "!I@7 unexpected end of file in [[ ... ]]"),
	T("echo <(ls",
	    "!I@5 unexpected end of file while looking for matching `)'"),
	T("echo \"${x",
	    "!I@6 unexpected end of file while looking for matching `}'"),
	T("echo \"'",
	    "!I@7 unexpected end of file while looking for the end of a double-quoted string"),
	T("echo a\\\n",
	    "!I@8 line continuation at the end"),
	T("echo $(echo \"a",
	    "!I@14 unexpected end of file while looking for the end of a double-quoted string"),
	T("for ((i=0",
	    "!I@9 unexpected end of file while looking for the end of a nested construct"),
	T("echo {a,b",
	    "[echo '{a,b']"),
	T("! ",
	    "! []"),
};

static const struct tcase injection_cases[] = {
	T("ls\nrm -rf x",
	    "[ls]; [rm -rf x]"),
	T("ls\015rm",
	    "[ls\015rm]"),
	T("ls\013rm",
	    "[ls\013rm]"),
	T("ls\014rm",
	    "[ls\014rm]"),
	T("ls;rm",
	    "[ls]; [rm]"),
	T("ls&rm",
	    "[ls] &; [rm]"),
	T("ls|rm",
	    "[ls] | [rm]"),
	T("ls$(rm)",
	    "[ls$([rm])]"),
	T("ls`rm`",
	    "[ls`[rm]`]"),
	T("ls <(rm)",
	    "[ls <([rm])]"),
	T("ls >(rm)",
	    "[ls >([rm])]"),
	T("ls #\nrm",
	    "[ls]; [rm]"),
	T("ls # $(rm)",
	    "[ls]"),
	T("echo '$(rm)'",
	    "[echo '$(rm)']"),
	T("echo \"$(rm)\"",
	    "[echo $([rm])]"),
	T("echo \\$(rm)",
	    "!E@7 syntax error near unexpected token `('"),
	T("echo '\\''$(rm)'",
	    "[echo '\\$(rm)']"),
	T("ls ${x:-$(rm)}",
	    "[ls ${x:-$([rm])}]"),
	T("ls ${x:=`rm`}",
	    "[ls ${x:=`[rm]`}]"),
	T("a[$(rm)]=1",
	    "[a[$([rm])]=1]"),
	T("echo $((a[$(rm)]))",
	    "[echo $((a[$([rm])]))]"),
	T("[[ $(rm) ]]",
	    "[[ $([rm]) ]]"),
	T("[[ -n x && $(rm) ]]",
	    "[[ -n x '&&' $([rm]) ]]"),
	T("cat <<E\n$(rm)\nE\n",
	    "[cat <<E{$([rm])\n}]"),
	T("cat <<'E'\n$(rm)\nE\n",
	    "[cat <<'E{'$(rm)\n'}]"),
	T("cat <<E\nE\nrm\n",
	    "[cat <<E{''}]; [rm]"),
	T("cat <<E\n E\nrm\nE\n",
	    "[cat <<E{' E\nrm\n'}]"),
	T("cat <<-E\n\tE\nrm\n",
	    "[cat <<-E{''}]; [rm]"),
	T("cat <<-E\n  E\nrm\nE\n",
	    "[cat <<-E{'  E\nrm\n'}]"),
	T("echo \"a\nrm\"",
	    "[echo 'a\nrm']"),
	T("echo 'a\nrm'",
	    "[echo 'a\nrm']"),
	T("echo a\\\nrm",
	    "[echo arm]"),
	T("ec\\\nho $(r\\\nm)",
	    "[echo $([rm])]"),
	T("x=$(rm) ls",
	    "[x=$([rm]) ls]"),
	T("ls >$(rm)",
	    "[ls >$([rm])]"),
	T("ls 2>`rm`",
	    "[ls 2>`[rm]`]"),
	T("ls <<<$(rm)",
	    "[ls <<<$([rm])]"),
	T("f() { rm; }; f",
	    "function f { [rm] }; [f]"),
	T("coproc rm",
	    "coproc [rm]"),
	T("time rm",
	    "time [rm]"),
	T("! rm",
	    "! [rm]"),
	T("ls | rm",
	    "[ls] | [rm]"),
	T("ls && rm",
	    "[ls] && [rm]"),
	T("ls || rm",
	    "[ls] || [rm]"),
	T("ls & rm",
	    "[ls] &; [rm]"),
	T("(rm)",
	    "( [rm] )"),
	T("{ rm; }",
	    "{ [rm] }"),
	T("if rm; then :; fi",
	    "if [rm] then [:] fi"),
	T("while rm; do :; done",
	    "while [rm] do [:] done"),
	T("for x in $(rm); do :; done",
	    "for x in $([rm]) do [:] done"),
	T("case $(rm) in *) ;; esac",
	    "case $([rm]) in <G:*>) ;; esac"),
	T("case x in *) rm;; esac",
	    "case x in <G:*>) [rm] ;; esac"),
	T("select x in $(rm); do :; done",
	    "select x in $([rm]) do [:] done"),
	T("(( $(rm) ))",
	    "(( $([rm]) ))"),
	T("for ((i=0;i<$(rm);i++)); do :; done",
	    "!E@10 command substitution inside for ((...)) is not supported"),
	T("echo ${a[$(rm)]}",
	    "[echo ${a[$([rm])]}]"),
	T("echo ${x/$(rm)/y}",
	    "[echo ${x/$([rm])/y}]"),
	T("echo ${x:$(rm)}",
	    "[echo ${x:$([rm])}]"),
	T("echo ${!x}",
	    "[echo ${!x}]"),
	T("echo ${x@P}",
	    "[echo ${x@P}]"),
	T("export A=$(rm)",
	    "[export A=$([rm])]"),
	T("declare a=($(rm))",
	    "[declare a=($([rm]))]"),
	T("local x=`rm`",
	    "[local x=`[rm]`]"),
	T("echo `echo \\`rm\\``",
	    "[echo `[echo `[rm]`]`]"),
	T("echo \"`rm`\"",
	    "[echo `[rm]`]"),
	T("echo $\"$(rm)\"",
	    "[echo $([rm])]"),
	T("echo $'$(rm)'",
	    "[echo '$(rm)']"),
	T("$(rm)",
	    "[$([rm])]"),
	T("`rm`",
	    "[`[rm]`]"),
	T("${x}",
	    "[${x}]"),
	T("$x",
	    "[${x}]"),
	T("\"$x\"",
	    "[${x}]"),
	T("/bin/s?",
	    "[/bin/s<G:?>]"),
	T("{rm,x}",
	    "[<B:{rm,x}>rm,x]"),
	T("~u/bin/x",
	    "[<~u>/bin/x]"),
	T("r\"\"m",
	    "[rm]"),
	T("r''m",
	    "[rm]"),
	T("r\\m",
	    "[rm]"),
	T("\"rm\"",
	    "[rm]"),
	T("$'rm'",
	    "[rm]"),
	T("$'\\x72m'",
	    "[rm]"),
	T("A=1 rm",
	    "[A=1 rm]"),
	T("LD_PRELOAD=x ls",
	    "[LD_PRELOAD=x ls]"),
	T("exec rm",
	    "[exec rm]"),
	T("eval rm",
	    "[eval rm]"),
	T("command rm",
	    "[command rm]"),
	T("builtin rm",
	    "[builtin rm]"),
	T("env rm",
	    "[env rm]"),
	T("nohup rm",
	    "[nohup rm]"),
	T("echo ${x:-<(rm)}",
	    "[echo ${x:-<([rm])}]"),
	T("echo ${x:+>(rm)}",
	    "[echo ${x:+>([rm])}]"),
};

struct table {
	const char		*name;
	const struct tcase	*cases;
	size_t			 n;
};

#define TABLE(x)	{ #x, x##_cases, sizeof(x##_cases) / sizeof(x##_cases[0]) }

static const struct table tables[] = {
	TABLE(quoting), TABLE(params), TABLE(cmdsub), TABLE(arith),
	TABLE(procsub), TABLE(expand), TABLE(lists), TABLE(compound),
	TABLE(assign), TABLE(redir), TABLE(heredoc), TABLE(errors),
	TABLE(incomplete), TABLE(injection),
};

/* What one case gives, in the table's notation. */
static const char *
outcome(const char *in, size_t len, enum ag_sh_status *stp, char *buf,
    size_t buflen)
{
	struct ag_sh_node *tree = (struct ag_sh_node *)1;
	struct ag_err err;
	enum ag_sh_status st;

	st = ag_sh_parse(in, len, &tree, &err);
	if (stp != NULL)
		*stp = st;
	if (st != AG_SH_OK) {
		if (tree != NULL)
			return "<tree returned with an error>";
		if (err.msg[0] == '\0')
			return "<error without a message>";
		snprintf(buf, buflen, "%s@%ld %s",
		    st == AG_SH_INCOMPLETE ? "!I" : "!E", err.off, err.msg);
		return buf;
	}
	if (tree == NULL || tree->type != AG_SH_LIST)
		return "<no LIST tree>";
	ser_tree(tree, buf, buflen);
	ag_sh_free(tree);
	return buf;
}

static void
run_table(const char *name)
{
	static char got[1 << 16];
	size_t t, i, bad = 0;

	for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		if (strcmp(tables[t].name, name) != 0)
			continue;
		for (i = 0; i < tables[t].n; i++) {
			const struct tcase *c = &tables[t].cases[i];

			outcome(c->in, c->len, NULL, got, sizeof(got));
			if (strcmp(got, c->want) != 0) {
				print_error("%s[%zu]: input  <%s>\n    got  <%s>\n"
				    "    want <%s>\n", name, i, c->in, got, c->want);
				bad++;
			}
		}
		assert_int_equal(bad, 0);
		return;
	}
	fail_msg("no table %s", name);
}

static void quoting_and_quote_removal(void **s) { (void)s; run_table("quoting"); }
static void parameter_expansions(void **s) { (void)s; run_table("params"); }
static void command_substitutions(void **s) { (void)s; run_table("cmdsub"); }
static void arithmetic(void **s) { (void)s; run_table("arith"); }
static void process_substitutions(void **s) { (void)s; run_table("procsub"); }
static void brace_tilde_glob(void **s) { (void)s; run_table("expand"); }
static void lists_and_pipelines(void **s) { (void)s; run_table("lists"); }
static void compound_commands(void **s) { (void)s; run_table("compound"); }
static void assignments(void **s) { (void)s; run_table("assign"); }
static void redirections(void **s) { (void)s; run_table("redir"); }
static void here_documents(void **s) { (void)s; run_table("heredoc"); }
static void syntax_errors_with_offsets(void **s) { (void)s; run_table("errors"); }
static void incomplete_inputs(void **s) { (void)s; run_table("incomplete"); }
static void injection_attempts_stay_visible(void **s) { (void)s; run_table("injection"); }

/* ---- differential check against bash ---------------------------------- */

/*
 * Whether `bash -n -c IN` accepts each of the n inputs: ok[i] = 1 when it
 * exits 0 without a word on stderr, 0 when not; -1 without bash.  bash -n
 * reports some errors (inside [[ ]]) on stderr yet exits 0; bash -c
 * refuses to run such a line, so any message counts as "no".
 *
 * One driver bash spawns them all, the inputs NUL-separated on its stdin:
 * under valgrind every spawn from this process copies valgrind's state,
 * which made one spawn per input take minutes; from bash it costs a fork.
 */
static int
bash_accepts_all(const char *const *in, size_t n, char *ok)
{
	static char a0[] = "bash", a1[] = "--norc", a2[] = "--noprofile",
	    a3[] = "-c", a5[] = "bash-n-driver";
	/* $1: a file for each bash's messages */
	static char driver[] =
	    "while IFS= read -r -d '' c; do\n"
	    /* "--": a command line may start with a "-" */
	    "  /bin/bash --norc --noprofile -n -c -- \"$c\" </dev/null >/dev/null 2>\"$1\"\n"
	    "  if [ $? = 0 ] && [ ! -s \"$1\" ]; then printf 1; else printf 0; fi\n"
	    "done\n";
	char tmpl[] = "/tmp/ag-shparse-bash.XXXXXX", errf[] = "/tmp/ag-shparse-err.XXXXXX";
	char *argv[8], buf[4096];
	posix_spawn_file_actions_t fa;
	size_t i, got = 0;
	ssize_t w;
	pid_t pid;
	int status, rc, fd, out[2];

	if (access("/bin/bash", X_OK) != 0 || (fd = mkstemp(tmpl)) < 0)
		return -1;
	unlink(tmpl);
	if ((rc = mkstemp(errf)) < 0) {
		close(fd);
		return -1;
	}
	close(rc);
	for (i = 0; i < n; i++) {
		size_t len = strlen(in[i]) + 1;	/* with its NUL, the separator */

		if ((w = write(fd, in[i], len)) != (ssize_t)len) {
			close(fd);
			unlink(errf);
			return -1;
		}
	}
	if (lseek(fd, 0, SEEK_SET) != 0 || pipe(out) == -1) {
		close(fd);
		unlink(errf);
		return -1;
	}
	argv[0] = a0; argv[1] = a1; argv[2] = a2; argv[3] = a3;
	argv[4] = driver; argv[5] = a5; argv[6] = errf; argv[7] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclose(&fa, fd);
	posix_spawn_file_actions_addclose(&fa, out[0]);
	posix_spawn_file_actions_addclose(&fa, out[1]);
	rc = posix_spawn(&pid, "/bin/bash", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd);
	close(out[1]);
	if (rc != 0) {
		close(out[0]);
		unlink(errf);
		return -1;
	}
	while ((w = read(out[0], buf, sizeof(buf))) > 0) {
		for (i = 0; i < (size_t)w; i++, got++)
			if (got < n)
				ok[got] = buf[i] == '1';
	}
	close(out[0]);
	while (waitpid(pid, &status, 0) == -1)
		;
	unlink(errf);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == n ? 0 : -1;
}

/* Run `bash -c cmd`; its stdout into buf (NUL-terminated). -1 without bash. */
static int
bash_output(const char *cmd, char *buf, size_t len)
{
	static char a0[] = "bash", a1[] = "--norc", a2[] = "--noprofile",
	    a3[] = "-c", a4[] = "--";
	char *copy, *argv[7];
	posix_spawn_file_actions_t fa;
	size_t got = 0;
	ssize_t n;
	pid_t pid;
	int status, rc, out[2];

	if (access("/bin/bash", X_OK) != 0 || (copy = strdup(cmd)) == NULL)
		return -1;
	argv[0] = a0; argv[1] = a1; argv[2] = a2; argv[3] = a3;
	argv[4] = a4; argv[5] = copy; argv[6] = NULL;
	if (pipe(out) == -1) {
		free(copy);
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclose(&fa, out[0]);
	posix_spawn_file_actions_addclose(&fa, out[1]);
	rc = posix_spawn(&pid, "/bin/bash", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	free(copy);
	close(out[1]);
	if (rc != 0) {
		close(out[0]);
		return -1;
	}
	while (got + 1 < len && (n = read(out[0], buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	close(out[0]);
	while (waitpid(pid, &status, 0) == -1)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static void
accepts_only_what_bash_accepts(void **state)
{
	static const char *const probe[] = { "true", "if" };
	static char got[1 << 16];
	const struct tcase **cases;
	const char **ins;
	char *ok, pok[2];
	size_t t, i, n = 0, stricter = 0, bad = 0;
	enum ag_sh_status st;

	(void)state;
	/* no bash, or one that does not tell a good line from a bad one: skip */
	if (bash_accepts_all(probe, 2, pok) != 0 || pok[0] != 1 || pok[1] != 0)
		skip();
	for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		n += tables[t].n;
	assert_non_null(cases = calloc(n, sizeof(*cases)));
	assert_non_null(ins = calloc(n, sizeof(*ins)));
	assert_non_null(ok = calloc(n, 1));
	n = 0;
	for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		for (i = 0; i < tables[t].n; i++) {
			const struct tcase *c = &tables[t].cases[i];

			if (memchr(c->in, '\0', c->len) != NULL)
				continue;
			cases[n] = c;
			ins[n++] = c->in;
		}
	}
	assert_int_equal(bash_accepts_all(ins, n, ok), 0);
	for (i = 0; i < n; i++) {
		outcome(cases[i]->in, cases[i]->len, &st, got, sizeof(got));
		if (st == AG_SH_OK && !ok[i]) {
			print_error("accepted, bash -n refuses: <%s>\n", cases[i]->in);
			bad++;
		}
		if (st != AG_SH_OK && ok[i])
			stricter++;
	}
	print_message("differential: %zu inputs, %zu refused here but "
	    "accepted by bash -n (fail-closed), 0 expected the other way: %zu\n",
	    n, stricter, bad);
	free(cases);
	free(ins);
	free(ok);
	assert_int_equal(bad, 0);
}

/* ---- literals and part queries ------------------------------------------ */

/* The first simple command of the first list entry. */
static struct ag_sh_node *
parse_ok(const char *in)
{
	struct ag_sh_node *tree;
	struct ag_err err;

	if (ag_sh_parse(in, strlen(in), &tree, &err) != AG_SH_OK)
		fail_msg("parse of <%s> failed: %s", in, err.msg);
	return tree;
}

static void
literal_is_what_the_program_receives(void **state)
{
	static const struct {
		const char *in;
		const char *lit;	/* of word 1; NULL = not a literal */
	} cases[] = {
		{ "x s''h", "sh" }, { "x \\s\\h", "sh" }, { "x \"s\"h", "sh" },
		{ "x $'\\x73'h", "sh" }, { "x $'\\163'h", "sh" },
		{ "x $'\\u0073'h", "sh" }, { "x $'\\U00000073'h", "sh" },
		{ "x 's'\"h\"", "sh" }, { "x s\\\nh", "sh" }, { "x $\"sh\"", "sh" },
		{ "x 'a b'", "a b" }, { "x \"a\\\\b\"", "a\\b" },
		{ "x \"a\\zb\"", "a\\zb" }, { "x ''", "" }, { "x \"\"", "" },
		{ "x '*'", "*" }, { "x \"?\"", "?" }, { "x \\[a]", "[a]" },
		{ "x \"{a,b}\"", "{a,b}" }, { "x \\~", "~" }, { "x \"~\"", "~" },
		{ "x [", "[" }, { "x ]", "]" }, { "x {}", "{}" }, { "x {x}", "{x}" },
		{ "x $'\\e'", "\033" }, { "x $'\\cA'", "\001" },
		{ "x $'\\c?'", "\177" }, { "x $'ab\\0cd'", "ab" },
		{ "x $'\\x41\\x4g'", "A\004g" }, { "x $'\\777'", NULL },
		{ "x $", "$" }, { "x a$", "a$" },
		{ "x $x", NULL }, { "x ${x}", NULL }, { "x $(y)", NULL },
		{ "x `y`", NULL }, { "x $((1))", NULL }, { "x *", NULL },
		{ "x a?", NULL }, { "x [ab]", NULL }, { "x {a,b}", NULL },
		{ "x {1..2}", NULL }, { "x ~", NULL }, { "x ~bob/x", NULL },
		{ "x <(y)", NULL }, { "x \"$x\"", NULL },
	};
	struct ag_sh_node *tree;
	const struct ag_sh_node *cmd;
	size_t i, n;
	char *lit;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ag_err err;

		if (ag_sh_parse(cases[i].in, strlen(cases[i].in), &tree,
		    &err) != AG_SH_OK) {
			/* $'\777' makes a byte that is not UTF-8: refused */
			assert_null(cases[i].lit);
			continue;
		}
		cmd = tree->kids[0];
		assert_int_equal(cmd->type, AG_SH_SIMPLE);
		assert_int_equal(cmd->nwords, 2);
		lit = ag_sh_word_literal(cmd->words[1], &n);
		if (cases[i].lit == NULL) {
			if (lit != NULL)
				fail_msg("<%s>: literal <%s>, want none",
				    cases[i].in, lit);
		} else {
			if (lit == NULL)
				fail_msg("<%s>: no literal, want <%s>", cases[i].in,
				    cases[i].lit);
			assert_string_equal(lit, cases[i].lit);
			assert_int_equal(n, strlen(cases[i].lit));
			/* and it is what bash really passes to a program */
			{
				char line[128], out[128], want[128];

				snprintf(line, sizeof(line), "printf '[%%s]' %s",
				    cases[i].in + 2);
				snprintf(want, sizeof(want), "[%s]", cases[i].lit);
				if (bash_output(line, out, sizeof(out)) == 0)
					assert_string_equal(out, want);
				else
					fail_msg("bash refused <%s>", line);
			}
		}
		free(lit);
		ag_sh_free(tree);
	}
}

static void
word_has_looks_into_operands_not_bodies(void **state)
{
	struct ag_sh_node *tree;
	const struct ag_sh_word *w;
	const struct ag_sh_part *pt;

	(void)state;
	tree = parse_ok("echo ${x:-$(id)} ${a[$(id)]} $((1+$(id))) $(ls *) "
	    "${y/?/`id`}");
	w = tree->kids[0]->words[1];
	assert_true(ag_sh_word_has(w, AG_SH_P_PARAM));
	assert_true(ag_sh_word_has(w, AG_SH_P_CMDSUB));
	assert_false(ag_sh_word_has(w, AG_SH_P_GLOB));
	assert_true(ag_sh_word_has(tree->kids[0]->words[2], AG_SH_P_CMDSUB));
	assert_true(ag_sh_word_has(tree->kids[0]->words[3], AG_SH_P_CMDSUB));
	/* the glob is inside the substitution's body, a separate tree */
	assert_true(ag_sh_word_has(tree->kids[0]->words[4], AG_SH_P_CMDSUB));
	assert_false(ag_sh_word_has(tree->kids[0]->words[4], AG_SH_P_GLOB));
	assert_true(ag_sh_word_has(tree->kids[0]->words[5], AG_SH_P_CMDSUB));
	/* the parameter's fields */
	pt = &w->parts[0];
	assert_int_equal(pt->type, AG_SH_P_PARAM);
	assert_true(pt->braced);
	assert_string_equal(pt->text, "x");
	assert_string_equal(pt->op, ":-");
	assert_non_null(pt->operand);
	assert_int_equal(pt->operand->parts[0].type, AG_SH_P_CMDSUB);
	pt = &tree->kids[0]->words[2]->parts[0];
	assert_string_equal(pt->text, "a");
	assert_non_null(pt->subscript);
	assert_string_equal(pt->subscript->raw, "$(id)");
	pt = &tree->kids[0]->words[3]->parts[0];
	assert_int_equal(pt->type, AG_SH_P_ARITH);
	assert_string_equal(pt->text, "1+$(id)");
	assert_true(ag_sh_word_has(pt->expr, AG_SH_P_CMDSUB));
	pt = &tree->kids[0]->words[5]->parts[0];
	assert_string_equal(pt->op, "/");
	assert_string_equal(pt->operand->raw, "?");
	assert_true(pt->operand2->parts[0].backtick);
	assert_int_equal(ag_sh_word_has(NULL, AG_SH_P_LIT), 0);
	assert_null(ag_sh_word_literal(NULL, NULL));
	ag_sh_free(tree);
}

static void
offsets_point_into_the_input(void **state)
{
	const char *in = "ls -l  'a b' | grep \"$x\" >out; cat <<E\nbody\nE\n";
	struct ag_sh_node *tree;
	const struct ag_sh_node *pipe, *cat;
	const struct ag_sh_word *w;

	(void)state;
	tree = parse_ok(in);
	assert_int_equal(tree->nkids, 2);
	pipe = tree->kids[0];
	assert_int_equal(pipe->type, AG_SH_PIPELINE);
	w = pipe->kids[0]->words[2];
	assert_int_equal(w->off, 7);
	assert_int_equal(w->end, 12);
	assert_string_equal(w->raw, "'a b'");
	w = pipe->kids[1]->words[1];
	assert_string_equal(w->raw, "\"$x\"");
	assert_int_equal(w->nparts, 1);
	assert_int_equal(w->parts[0].type, AG_SH_P_PARAM);
	assert_int_equal(w->parts[0].off, 21);
	assert_int_equal(w->parts[0].end, 23);
	assert_int_equal(w->parts[0].quote, AG_SH_Q_DOUBLE);
	assert_int_equal(pipe->kids[1]->redirs[0].off, 25);
	assert_int_equal(pipe->kids[1]->redirs[0].op, AG_SH_R_OUT);
	cat = tree->kids[1];
	assert_int_equal(cat->redirs[0].op, AG_SH_R_HEREDOC);
	assert_string_equal(cat->redirs[0].delim, "E");
	assert_string_equal(cat->redirs[0].target->raw, "body\n");
	assert_int_equal(cat->redirs[0].target->off, strlen("ls -l  'a b' | grep \"$x\" >out; cat <<E\n"));
	ag_sh_free(tree);
}

static void
dump_prints_an_outline(void **state)
{
	struct ag_sh_node *tree;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;

	(void)state;
	tree = parse_ok("A=1 ls -l \"$HOME\" 2>&1 | grep -v x &");
	assert_non_null(fp = open_memstream(&buf, &len));
	ag_sh_dump(tree, fp);
	fclose(fp);
	assert_string_equal(buf,
	    "LIST [0-36]\n"
	    "  background:\n"
	    "  PIPELINE [0-34]\n"
	    "    SIMPLE [0-22]\n"
	    "      assign A\n"
	    "        value \"1\"\n"
	    "          LIT \"1\"\n"
	    "      word \"ls\"\n"
	    "        LIT \"ls\"\n"
	    "      word \"-l\"\n"
	    "        LIT \"-l\"\n"
	    "      word \"\\\"$HOME\\\"\"\n"
	    "        PARAM double \"HOME\"\n"
	    "      redir >& fd=2\n"
	    "        target \"1\"\n"
	    "          LIT \"1\"\n"
	    "    SIMPLE [25-34]\n"
	    "      word \"grep\"\n"
	    "        LIT \"grep\"\n"
	    "      word \"-v\"\n"
	    "        LIT \"-v\"\n"
	    "      word \"x\"\n"
	    "        LIT \"x\"\n");
	free(buf);
	ag_sh_free(tree);
}

/* ---- refused input ------------------------------------------------------ */

static void
expect(const char *in, size_t len, enum ag_sh_status want, long off,
    const char *msgpart)
{
	struct ag_sh_node *tree = (struct ag_sh_node *)1;
	struct ag_err err;
	enum ag_sh_status st;

	st = ag_sh_parse(in, len, &tree, &err);
	if (st != want)
		fail_msg("<%.60s>: status %d, want %d (%s)", in, st, want, err.msg);
	assert_null(tree);
	if (off >= 0)
		assert_int_equal(err.off, off);
	if (msgpart != NULL && strstr(err.msg, msgpart) == NULL)
		fail_msg("<%.60s>: message <%s> lacks <%s>", in, err.msg, msgpart);
}

static void
refuses_nul_bytes(void **state)
{
	(void)state;
	expect("echo a\0b", sizeof("echo a\0b") - 1, AG_SH_ERROR, 6, "NUL");
	expect("\0", sizeof("\0") - 1, AG_SH_ERROR, 0, "NUL");
	expect("echo 'a\0'", sizeof("echo 'a\0'") - 1, AG_SH_ERROR, 7, "NUL");
	expect("cat <<E\n\0\nE\n", sizeof("cat <<E\n\0\nE\n") - 1, AG_SH_ERROR, 8, "NUL");
}

static void
refuses_invalid_utf8_in_words(void **state)
{
	struct ag_sh_node *tree;
	struct ag_err err;

	(void)state;
	expect("echo \377", sizeof("echo \377") - 1, AG_SH_ERROR, 5, "UTF-8");
	expect("\377ls", sizeof("\377ls") - 1, AG_SH_ERROR, 0, "UTF-8");
	expect("echo ab\303", sizeof("echo ab\303") - 1, AG_SH_ERROR, 7, "UTF-8");		/* truncated */
	expect("echo \300\257", sizeof("echo \300\257") - 1, AG_SH_ERROR, 5, "UTF-8");	/* overlong / */
	expect("echo \355\240\200", sizeof("echo \355\240\200") - 1, AG_SH_ERROR, 5, "UTF-8");	/* surrogate */
	expect("echo \364\220\200\200", sizeof("echo \364\220\200\200") - 1, AG_SH_ERROR, 5, "UTF-8"); /* > U+10FFFF */
	expect("echo 'a\377'", sizeof("echo 'a\377'") - 1, AG_SH_ERROR, 7, "UTF-8");
	expect("echo \"a\377\"", sizeof("echo \"a\377\"") - 1, AG_SH_ERROR, 7, "UTF-8");
	expect("echo \\\377", sizeof("echo \\\377") - 1, AG_SH_ERROR, 6, "UTF-8");
	expect("echo $'\\xff'", sizeof("echo $'\\xff'") - 1, AG_SH_ERROR, 5, "UTF-8");
	expect("echo $'\\377'", sizeof("echo $'\\377'") - 1, AG_SH_ERROR, 5, "UTF-8");
	expect("echo $(ls \377)", sizeof("echo $(ls \377)") - 1, AG_SH_ERROR, 10, "UTF-8");
	expect("echo >\377", sizeof("echo >\377") - 1, AG_SH_ERROR, 6, "UTF-8");
	expect("A=\377 ls", sizeof("A=\377 ls") - 1, AG_SH_ERROR, 2, "UTF-8");
	expect("echo ~\377/x", sizeof("echo ~\377/x") - 1, AG_SH_ERROR, 5, "UTF-8");
	expect("echo $'\\ud800'", sizeof("echo $'\\ud800'") - 1, AG_SH_ERROR, -1, "valid");
	/* valid multibyte text, comments and here-document bodies pass */
	assert_int_equal(ag_sh_parse("echo h\303\251 \360\237\230\200 # \377",
	    strlen("echo h\303\251 \360\237\230\200 # \377"), &tree, &err), AG_SH_OK);
	ag_sh_free(tree);
	assert_int_equal(ag_sh_parse("cat <<E\n\377\nE\n", 12, &tree, &err),
	    AG_SH_OK);
	ag_sh_free(tree);
}

static void
input_size_limit(void **state)
{
	static const char unit[] = "echo \"a $b\" $(c d) | e f >>g;\n";
	size_t n = 1024 * 1024, i, ul = sizeof(unit) - 1;
	char *buf = malloc(AG_SH_MAX_INPUT + 2);
	struct ag_sh_node *tree;
	struct ag_err err;

	(void)state;
	assert_non_null(buf);
	/* 1 MiB of ordinary commands: parses */
	for (i = 0; i + ul <= n; i += ul)
		memcpy(buf + i, unit, ul);
	memset(buf + i, ' ', n - i);
	assert_int_equal(ag_sh_parse(buf, n, &tree, &err), AG_SH_OK);
	assert_int_equal(tree->nkids, n / ul);
	ag_sh_free(tree);
	/* one byte over the limit: refused before parsing */
	memset(buf, ' ', AG_SH_MAX_INPUT + 1);
	expect(buf, AG_SH_MAX_INPUT + 1, AG_SH_ERROR, -1, "too long");
	assert_int_equal(ag_sh_parse(buf, AG_SH_MAX_INPUT, &tree, &err), AG_SH_OK);
	ag_sh_free(tree);
	free(buf);
}

/* prefix x n, middle, suffix x n */
static char *
nest(const char *pre, const char *mid, const char *post, size_t n, size_t *lenp)
{
	size_t lp = strlen(pre), lm = strlen(mid), ls = strlen(post), i;
	char *buf = malloc(n * (lp + ls) + lm + 1), *q = buf;

	assert_non_null(buf);
	for (i = 0; i < n; i++, q += lp)
		memcpy(q, pre, lp);
	memcpy(q, mid, lm);
	q += lm;
	for (i = 0; i < n; i++, q += ls)
		memcpy(q, post, ls);
	*q = '\0';
	*lenp = (size_t)(q - buf);
	return buf;
}

static const struct {
	const char *pre, *mid, *post;
} shapes[] = {
	{ "( ", "a", " )" }, { "$(", "a", ")" }, { "{ ", "a", "; }" },
		{ "\"$(", "a", ")\"" }, { "${x:-", "a", "}" }, { "<(", "a", ")" },
		{ "if a; then ", "b", "; fi" }, { "while ", "a", "; do b; done" },
		{ "[[ ( ", "a", " ) ]]" }, { "[[ ! ", "a", " ]]" },	/* see below */
		{ "a && ", "b", "" }, { "a || ", "b", "" }, { "a | ", "b", "" },
		{ "${a[", "1", "]}" },
		{ "case x in x) ", "a", ";; esac" }, { "f() { ", "a", "; }" },
		{ "echo $(( $(( ", "1", " )) ))" }, { "a=( $(", "a", ") )" },
};

/* Shape i nested n deep; the [[ ]] shapes nest inside one [[ ]]. */
static char *
shape(size_t i, size_t n, size_t *lenp)
{
	const char *pre = shapes[i].pre, *post = shapes[i].post;
	char *inner, *out;
	size_t len;

	if (strncmp(pre, "[[ ", 3) != 0)
		return nest(pre, shapes[i].mid, post, n, lenp);
	inner = nest(pre + 3, shapes[i].mid, strcmp(post, " ) ]]") == 0 ?
	    " )" : "", n, &len);
	assert_non_null(out = malloc(len + 8));
	snprintf(out, len + 8, "[[ %s ]]", inner);
	free(inner);
	*lenp = strlen(out);
	return out;
}

static void
deep_nesting_is_refused_cleanly(void **state)
{
	size_t i, len;
	char *in;

	(void)state;
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct ag_sh_node *tree;
		struct ag_err err;
		enum ag_sh_status st;

		/* 10000 levels: refused, no stack overflow */
		in = shape(i, 10000, &len);
		st = ag_sh_parse(in, len, &tree, &err);
		if (strcmp(shapes[i].pre, "a | ") == 0) {
			/* a pipeline is a flat list: fine at any length */
			assert_int_equal(st, AG_SH_OK);
			ag_sh_free(tree);
		} else {
			if (st != AG_SH_ERROR || strstr(err.msg, "too deep") == NULL)
				fail_msg("shape %zu: status %d <%s>", i, st, err.msg);
		}
		free(in);
		/* 20 levels: fine */
		in = shape(i, 20, &len);
		st = ag_sh_parse(in, len, &tree, &err);
		if (st != AG_SH_OK)
			fail_msg("shape %zu x20: %s", i, err.msg);
		ag_sh_free(tree);
		free(in);
	}
	/* arithmetic parentheses are counted, not recursed */
	in = nest("(", "1", ")", 100000, &len);
	{
		char *cmd = malloc(len + 16);
		struct ag_sh_node *tree;
		struct ag_err err;

		assert_non_null(cmd);
		snprintf(cmd, len + 16, "echo $((%s))", in);
		assert_int_equal(ag_sh_parse(cmd, strlen(cmd), &tree, &err), AG_SH_OK);
		ag_sh_free(tree);
		free(cmd);
	}
	free(in);
}

/*
 * Large inputs of every shape (ordinary commands and the pathological
 * ones: unclosed [ and {, long digit runs, continuations, long words,
 * many here-documents) end as they must at 64 KiB as at 1 KiB: parsed,
 * with one list entry per command, or refused for the one reason that
 * applies, never crashing.  Two shapes also at 1 MiB (ordinary commands
 * at 1 MiB are in input_size_limit); not under valgrind, where 1 MiB
 * parses cost seconds each and show nothing 64 KiB does not.
 *
 * How the parse time grows with the size is measured by
 * contrib/bench/bench_decide: a ratio of times is a measurement, not a
 * pass/fail property of the parser.
 */
#define PER_UNIT	(-1L)	/* one list entry per repetition of the unit */

static void
large_inputs_parse_or_are_refused_as_expected(void **state)
{
	static const struct {
		const char		*unit;
		enum ag_sh_status	 want;
		long			 entries;	/* of the list when parsed */
		const char		*msgpart;	/* of the refusal */
		int			 mib;		/* also at 1 MiB */
	} units[] = {
		{ "git log --oneline -n 3 | grep -v 'a|b' >>out.txt; ", AG_SH_OK, PER_UNIT, NULL, 0 },
		{ "[", AG_SH_OK, 1, NULL, 0 },
		{ "{", AG_SH_OK, 1, NULL, 0 },
		{ "1", AG_SH_OK, 1, NULL, 0 },
		{ "\\\n", AG_SH_INCOMPLETE, 0, "line continuation at the end", 1 },
		{ "a", AG_SH_OK, 1, NULL, 0 },
		{ "$x", AG_SH_OK, 1, NULL, 0 },
		{ "{a,", AG_SH_OK, 1, NULL, 0 },
		{ "x=(1 2) ", AG_SH_OK, 1, NULL, 0 },
		{ "[[ a ]]; ", AG_SH_OK, PER_UNIT, NULL, 0 },
		{ "cat <<E\nb\nE\n", AG_SH_OK, PER_UNIT, NULL, 1 },
		{ "${a[1]}", AG_SH_OK, 1, NULL, 0 },
		{ "'a'\"b\"$'c'", AG_SH_OK, 1, NULL, 0 },
		{ "\"$(a)\" ", AG_SH_OK, 1, NULL, 0 },
		{ "#c\n", AG_SH_OK, 0, NULL, 0 },
	};
	size_t sizes[] = { 1024, 64 * 1024, 1024 * 1024 }, nsizes = RUNNING_ON_VALGRIND ? 2 : 3;
	size_t u, k, i, ul, reps;
	char *buf = malloc(1024 * 1024);

	(void)state;
	assert_non_null(buf);
	for (u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		ul = strlen(units[u].unit);
		for (k = 0; k < nsizes; k++) {
			struct ag_sh_node *tree = (struct ag_sh_node *)1;
			struct ag_err err;
			enum ag_sh_status st;
			long want_entries = units[u].entries;

			if (sizes[k] > 64 * 1024 && !units[u].mib)
				continue;
			for (i = 0, reps = 0; i + ul <= sizes[k]; i += ul, reps++)
				memcpy(buf + i, units[u].unit, ul);
			if (want_entries == PER_UNIT)
				want_entries = (long)reps;
			ag_err_clear(&err);
			st = ag_sh_parse(buf, i, &tree, &err);
			if (st != units[u].want)
				fail_msg("<%s> x %zu (%zu bytes): status %d, want %d (%s)",
				    units[u].unit, reps, i, (int)st, (int)units[u].want, err.msg);
			if (st == AG_SH_OK) {
				assert_non_null(tree);
				assert_int_equal(tree->type, AG_SH_LIST);
				if ((long)tree->nkids != want_entries)
					fail_msg("<%s> x %zu: %zu list entries, want %ld",
					    units[u].unit, reps, (size_t)tree->nkids, want_entries);
				ag_sh_free(tree);
			} else {
				assert_null(tree);
				if (strstr(err.msg, units[u].msgpart) == NULL)
					fail_msg("<%s> x %zu: message <%s> lacks <%s>",
					    units[u].unit, reps, err.msg, units[u].msgpart);
			}
		}
	}
	free(buf);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quoting_and_quote_removal),
		cmocka_unit_test(parameter_expansions),
		cmocka_unit_test(command_substitutions),
		cmocka_unit_test(arithmetic),
		cmocka_unit_test(process_substitutions),
		cmocka_unit_test(brace_tilde_glob),
		cmocka_unit_test(lists_and_pipelines),
		cmocka_unit_test(compound_commands),
		cmocka_unit_test(assignments),
		cmocka_unit_test(redirections),
		cmocka_unit_test(here_documents),
		cmocka_unit_test(syntax_errors_with_offsets),
		cmocka_unit_test(incomplete_inputs),
		cmocka_unit_test(injection_attempts_stay_visible),
		cmocka_unit_test(literal_is_what_the_program_receives),
		cmocka_unit_test(word_has_looks_into_operands_not_bodies),
		cmocka_unit_test(offsets_point_into_the_input),
		cmocka_unit_test(dump_prints_an_outline),
		cmocka_unit_test(refuses_nul_bytes),
		cmocka_unit_test(refuses_invalid_utf8_in_words),
		cmocka_unit_test(input_size_limit),
		cmocka_unit_test(deep_nesting_is_refused_cleanly),
		cmocka_unit_test(large_inputs_parse_or_are_refused_as_expected),
		cmocka_unit_test(accepts_only_what_bash_accepts),
	};

	return cmocka_run_group_tests_name("shparse", tests, NULL, NULL);
}
