/*
 * test_redact.c - secrets out of output and audit records (src/exec/redact.c):
 * each built-in shape is hidden wherever the stream is split, a private key
 * goes whole (body included), the profile's own patterns apply, text
 * without secrets passes byte for byte (NUL bytes and long lines too), and
 * a command line's sensitive assignments are masked for the record.
 */
#include "agconfig.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/config.h"
#include "common/strbuf.h"
#include "common/tokenhash.h"
#include "exec/redact.h"

static int
collect(void *ctx, const char *p, size_t n)
{
	return ag_strbuf_append(ctx, p, n);
}

/* The text through a redactor for profile p, fed in pieces of step bytes. */
static char *
run(const struct ag_profile *p, const char *text, size_t len, size_t step, size_t *outlen)
{
	struct ag_redact *r;
	struct ag_strbuf sb;
	struct ag_err err;
	size_t i;

	ag_strbuf_init(&sb, 0);
	ag_err_clear(&err);
	r = ag_redact_new(p, &err);
	assert_non_null(r);
	for (i = 0; i < len; i += step)
		assert_int_equal(ag_redact_feed(r, text + i, len - i < step ? len - i : step,
		    collect, &sb), 0);
	assert_int_equal(ag_redact_end(r, collect, &sb), 0);
	ag_redact_free(r);
	assert_int_equal(ag_strbuf_append(&sb, "", 0), 0);
	return ag_strbuf_detach(&sb, outlen);
}

static struct ag_profile on = { .redact = 1 };

static const char *const secrets[] = {
	"AKIAIOSFODNN7EXAMPLE",
	"ghp_0123456789abcdefghijABCDEFGHIJ012345",
	"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRS",
	"glpat-abcdefghij0123456789",
	"xoxb-1234567890-0987654321-abcdefABCDEF",
	"https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXX",
	"sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
	"sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789-_AA",
	"AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
	"agt_ci.bot_7@x-y_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
};

static void
every_shape_is_hidden_at_every_split(void **state)
{
	size_t i, step;

	(void)state;
	for (i = 0; i < sizeof(secrets) / sizeof(secrets[0]); i++) {
		char text[512];
		int n = snprintf(text, sizeof(text), "before %s after\nnext line\n", secrets[i]);

		for (step = 1; step <= (size_t)n; step++) {
			size_t len;
			char *out = run(&on, text, (size_t)n, step, &len);

			assert_null(strstr(out, secrets[i]));
			assert_string_equal(out, "before " AG_REDACT_MARK " after\nnext line\n");
			free(out);
		}
	}
}

/*
 * agentgate's own identity tokens (issue 34): one made as `agentgate token
 * new` makes it is hidden in output and in a command line's record; text
 * that only starts like one is not.
 */
static void
agentgate_tokens_are_hidden(void **state)
{
	static const char *const plain[] = {
		"see agt_NAME_ and 64 hex digits\n",
		"agt_alice_0123456789abcdef\n",		/* too short */
		"agt__0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
		"agt_alice_0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef\n",
	};
	char tok[256], hash[AG_TOKEN_HASH_MAX], text[1024], want[1024], *out;
	struct ag_err err;
	size_t i, len;

	(void)state;
	ag_err_clear(&err);
	if (ag_token_new("ci.bot_7@corp-x", tok, sizeof(tok), hash, &err) < 0)
		fail_msg("ag_token_new: %s", err.msg);
	snprintf(text, sizeof(text), "export AGENTGATE_TOKEN=%s # was %s\n", tok, tok);
	snprintf(want, sizeof(want), "export AGENTGATE_TOKEN=%s # was %s\n", AG_REDACT_MARK,
	    AG_REDACT_MARK);
	out = run(&on, text, strlen(text), 7, &len);
	assert_string_equal(out, want);
	free(out);
	snprintf(text, sizeof(text), "ssh -o SetEnv=T=%s gw true", tok);
	assert_non_null(out = ag_redact_command(text, strlen(text), &len));
	assert_string_equal(out, "ssh -o SetEnv=T=" AG_REDACT_MARK " gw true");
	free(out);
	explicit_bzero(tok, sizeof(tok));
	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		out = run(&on, plain[i], strlen(plain[i]), 5, &len);
		assert_string_equal(out, plain[i]);
		free(out);
	}
}

static void
private_key_goes_whole(void **state)
{
	static const char text[] =
	    "key follows\n"
	    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
	    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
	    "QyNTUxOQAAACDk1Ln2H4c7z0Yb0C0AAAAECWtleS1ib2R5LXNlY3JldA==\n"
	    "-----END OPENSSH PRIVATE KEY-----\n"
	    "done\n";
	size_t step, len;

	(void)state;
	for (step = 1; step < sizeof(text); step += 7) {
		char *out = run(&on, text, sizeof(text) - 1, step, &len);

		assert_string_equal(out, "key follows\n[REDACTED PRIVATE KEY]\ndone\n");
		free(out);
	}
}

static void
private_key_without_end_hides_the_rest(void **state)
{
	static const char text[] = "x -----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nmore";
	size_t len;
	char *out = run(&on, text, sizeof(text) - 1, 5, &len);

	(void)state;
	assert_string_equal(out, "x [REDACTED PRIVATE KEY]\n");
	free(out);
}

static void
private_key_on_one_line(void **state)
{
	static const char text[] = "{\"key\": \"-----BEGIN EC PRIVATE KEY-----\\nMHcCAQEE\\n"
	    "-----END EC PRIVATE KEY-----\\n\"}\n";
	size_t len;
	char *out = run(&on, text, sizeof(text) - 1, 3, &len);

	(void)state;
	assert_string_equal(out, "{\"key\": \"" AG_REDACT_MARK "\\n\"}\n");
	free(out);
}

static void
own_patterns_apply(void **state)
{
	char *pats[] = { (char *)(uintptr_t)"corp-[0-9a-f]{8}", (char *)(uintptr_t)"x*" };
	struct ag_profile p = { .redact = 1, .redact_patterns = { pats, 1 } };
	size_t len;
	char *out = run(&p, "id corp-deadbeef ok\n", 20, 4, &len);

	(void)state;
	assert_string_equal(out, "id " AG_REDACT_MARK " ok\n");
	free(out);
	/* a pattern that matches the empty string changes nothing and ends */
	p.redact_patterns.v = pats + 1;
	out = run(&p, "abc\n", 4, 1, &len);
	assert_string_equal(out, "abc\n");
	free(out);
}

static void
plain_text_passes_byte_for_byte(void **state)
{
	static const char text[] = "a\0b sk-short AKIA\nno newline at the end";
	char *big, *out;
	size_t len, n = AG_REDACT_LINE_MAX * 2 + 100;

	(void)state;
	out = run(&on, text, sizeof(text) - 1, 3, &len);
	assert_int_equal(len, sizeof(text) - 1);
	assert_memory_equal(out, text, len);
	free(out);
	/* a line longer than what is held goes on in pieces, unchanged */
	big = malloc(n);
	assert_non_null(big);
	memset(big, 'y', n);
	out = run(&on, big, n, 4096, &len);
	assert_int_equal(len, n);
	assert_memory_equal(out, big, n);
	free(out);
	free(big);
}

/*
 * A line longer than what is held is judged in pieces; a secret that falls
 * across the end of a piece is hidden all the same (issue 34: one across
 * the 64 KiB boundary passed).  Every shape, a key on one line and a
 * profile's own pattern are written a few bytes apart through a
 * 200 KiB line, so secrets fall across each piece's end wherever the
 * pieces end; fed in large and in odd-sized reads.  What is not a secret
 * comes out byte for byte.
 */
static void
secret_across_the_hold_boundary_is_hidden(void **state)
{
	static const size_t steps[] = { 4096, 1000, 65537 };
	char *pats[] = { (char *)(uintptr_t)"corp-[0-9a-f]{8}" };
	struct ag_profile p = { .redact = 1, .redact_patterns = { pats, 1 } };
	struct ag_strbuf in, want;
	size_t i, k, len, fill;
	char *out;

	(void)state;
	ag_strbuf_init(&in, 0);
	ag_strbuf_init(&want, 0);
	for (i = 0, k = 0; in.len < AG_REDACT_LINE_MAX * 3; i++) {
		const char *sec = i % 4 == 3 ? "corp-deadbeef" : i % 7 == 5 ?
		    "-----BEGIN EC PRIVATE KEY-----\\nMHcCAQEE\\n-----END EC PRIVATE KEY-----" :
		    secrets[k++ % (sizeof(secrets) / sizeof(secrets[0]))];

		/* a short filler of varying length: secrets at every offset, and
		 * across each 64 KiB boundary (checked when this was written) */
		fill = 1 + (i * 7) % 5;
		for (len = 0; len < fill; len++) {
			assert_int_equal(ag_strbuf_append(&in, &"abc def.ghi,"[len % 12], 1), 0);
			assert_int_equal(ag_strbuf_append(&want, &"abc def.ghi,"[len % 12], 1), 0);
		}
		assert_int_equal(ag_strbuf_printf(&in, " %s ", sec), 0);
		assert_int_equal(ag_strbuf_addstr(&want, " " AG_REDACT_MARK " "), 0);
	}
	assert_int_equal(ag_strbuf_addstr(&in, "end\n"), 0);
	assert_int_equal(ag_strbuf_addstr(&want, "end\n"), 0);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		out = run(&p, in.data, in.len, steps[i], &len);
		assert_int_equal(len, want.len);
		assert_memory_equal(out, want.data, len);
		free(out);
	}
	ag_strbuf_free(&in);
	ag_strbuf_free(&want);
}

/* One secret exactly across the first boundary, at each split of it. */
static void
secret_at_the_boundary_at_every_split(void **state)
{
	static const char sec[] = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
	char *text, *out;
	size_t n = AG_REDACT_LINE_MAX + 100, k, len;

	(void)state;
	assert_non_null(text = malloc(n));
	for (k = 1; k < sizeof(sec) - 1; k++) {
		size_t at = AG_REDACT_LINE_MAX - k;

		memset(text, 'y', n);
		text[at - 1] = ' ';
		memcpy(text + at, sec, sizeof(sec) - 1);
		text[at + sizeof(sec) - 1] = ' ';
		out = run(&on, text, n, 8192, &len);
		assert_int_equal(len, n - (sizeof(sec) - 1) + strlen(AG_REDACT_MARK));
		assert_null(memmem(out, len, "0123456789abcdefghij", 20));
		assert_non_null(memmem(out, len, " " AG_REDACT_MARK " ", strlen(AG_REDACT_MARK) + 2));
		free(out);
	}
	free(text);
}

/*
 * A private key's BEGIN line cut where a hold ends, or where the piece
 * judged of it ends, still hides the key.
 */
static void
key_marker_at_the_boundary(void **state)
{
	static const char begin[] = " -----BEGIN RSA PRIVATE KEY-----",
	    rest[] = "\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nafter\n";
	const size_t pres[] = { AG_REDACT_LINE_MAX - 12, AG_REDACT_LINE_MAX - AG_REDACT_CARRY - 12 };
	size_t i, len, n;
	char *text, *out;

	(void)state;
	for (i = 0; i < sizeof(pres) / sizeof(pres[0]); i++) {
		/* the BEGIN line goes on past the hold, so it is judged in pieces */
		n = pres[i] + strlen(begin) + AG_REDACT_CARRY + strlen(rest);
		assert_non_null(text = malloc(n + 1));
		memset(text, 'y', pres[i]);
		memcpy(text + pres[i], begin, strlen(begin));
		memset(text + pres[i] + strlen(begin), 'z', AG_REDACT_CARRY);
		memcpy(text + n - strlen(rest), rest, strlen(rest) + 1);
		out = run(&on, text, n, 4096, &len);
		assert_int_equal(len, pres[i] + strlen(" [REDACTED PRIVATE KEY]\nafter\n"));
		assert_string_equal(out + pres[i], " [REDACTED PRIVATE KEY]\nafter\n");
		free(out);
		free(text);
	}
}

static void
off_means_no_redactor(void **state)
{
	struct ag_profile off = { .redact = 0 };
	struct ag_err err;

	(void)state;
	ag_err_clear(&err);
	assert_null(ag_redact_new(&off, &err));
	assert_string_equal(err.msg, "");
}

/* A command line and its record (NULL: the line as typed). */
struct cmd_case {
	const char	*in, *out;
};

static void
check_commands(const struct cmd_case *cases, size_t n)
{
	size_t i, len;

	for (i = 0; i < n; i++) {
		char *out = ag_redact_command(cases[i].in, strlen(cases[i].in), &len);

		assert_non_null(out);
		assert_string_equal(out, cases[i].out != NULL ? cases[i].out : cases[i].in);
		free(out);
	}
}

static void
command_assignments_are_masked(void **state)
{
	static const struct cmd_case cases[] = {
		{ "export GITHUB_TOKEN=ghp_abc", "export GITHUB_TOKEN=***" },
		{ "AWS_SECRET_ACCESS_KEY='wJalrXUtn' aws s3 ls", "AWS_SECRET_ACCESS_KEY='***' aws s3 ls" },
		/* a blank, a quote or a backslash: shown (red team 24, H1) */
		{ "AWS_SECRET_ACCESS_KEY='wJalr XUtn' aws s3 ls", "AWS_SECRET_ACCESS_KEY='wJalr XUtn' aws s3 ls" },
		{ "DB_PASSWORD=\"p\\\"w\"; echo ok", "DB_PASSWORD=\"p\\\"w\"; echo ok" },
		{ "declare -x api_key=abc && x", "declare -x api_key=*** && x" },
		{ "export STRIPE_KEY=sk_live GIT_AUTHOR_NAME=me", "export STRIPE_KEY=*** GIT_AUTHOR_NAME=me" },
		{ "echo $TOKEN; X=1 make", "echo $TOKEN; X=1 make" },
		{ "curl -H 'Authorization: token ghp_0123456789abcdefghijABCDEFGHIJ012345' u",
		  "curl -H 'Authorization: token " AG_REDACT_MARK "' u" },
		{ "MY_TOKEN= true", "MY_TOKEN= true" },
	};

	(void)state;
	check_commands(cases, sizeof(cases) / sizeof(cases[0]));
}

/*
 * A mask lies inside one word of the parse (red team 20, M1): $'..'
 * quoting, a comment, a here-document line or a quote in another word
 * never carry it past the word, so every later command and word stays.
 */
static void
command_masks_stay_in_their_word(void **state)
{
	static const struct cmd_case cases[] = {
		{ "echo hi # TOKEN='\ntouch HIDDEN_C\necho 'x'", NULL },
		/* a value bash expands or parses is never token-shaped: shown */
		{ "TOKEN=$'a\\'b' ; python3 -c 'print(1)'", NULL },
		{ "cat > .env <<'EOF'\nTOKEN='\nAPI_KEY=abc def\nB_TOKEN=\"q\"\nEOF\ntouch HIDDEN_H; echo ok",
		  "cat > .env <<'EOF'\nTOKEN='\nAPI_KEY=*** def\nB_TOKEN=\"***\"\nEOF\ntouch HIDDEN_H; echo ok" },
		{ "TOKEN=$(cat ~/.tok) make", "TOKEN=$(cat ~/.tok) make" },
		{ "TOKEN=ab$(touch X)cd make", NULL },
		{ "echo \"$(SECRET=abc; rm -f y)\" ok", "echo \"$(SECRET=***; rm -f y)\" ok" },
		{ "env API_KEY='ab' curl x", "env API_KEY='***' curl x" },
		{ "tool --api_key=abc --v", "tool --api_key=*** --v" },
		{ "K=(a b); PASSWORDS=(one two); x", "K=(a b); PASSWORDS=(*** ***); x" },
		{ "echo ) TOKEN='a\ntouch Z'", NULL },
		/* an array in a declare's word: bash parses it (red team 24, H1) */
		{ "declare -A TOKEN=([k]=secret [j]='two words') ; echo hi", NULL },
		/* NAME= inside another program's text: a whole token only, else
		 * nothing (red teams 22, 24 M2) */
		{ "node -e 'API_KEY=1//\"\nrequire(\"fs\").writeFileSync(\"P\", \"x\")'",
		  "node -e 'API_KEY=***\"\nrequire(\"fs\").writeFileSync(\"P\", \"x\")'" },
		{ "python3 -c 'TOKEN=1#\"\nopen(\"P\", \"w\")'", "python3 -c 'TOKEN=***\"\nopen(\"P\", \"w\")'" },
		/* a word that BEGINS with NAME= is no assignment either
		 * (red team 23, M1): only a declaration's word is bash's */
		{ "python3 -c TOKEN='0\nimport os\nos.system(\"touch H\")'", NULL },
		{ "node -e API_KEY=\"1;require('fs')\"", NULL },
		{ "awk TOKEN='=1;BEGIN{system(\"x\")}' /dev/null", NULL },
		{ "python3 -c SECRET=0\\;__import__", NULL },
		{ "x TOKEN=(a b)", "x TOKEN=(a b)" },
		/* a blank in a value: not token-shaped, shown (red team 24) */
		{ "export API_KEY='a b' X=1; readonly TOKEN=\"c d\"", NULL },
		{ "local SECRET=$'a b'", NULL },
		/* quoted declaration words and += (red team 23, L1); no array,
		 * no subscript (bash parses and expands them: red team 24, H1) */
		{ "declare -A 'TOKEN=([k]=s3cr3t-one)'; echo ${TOKEN[k]}", NULL },
		{ "export \"PASSWORD=s3cr3t-two\"; echo $PASSWORD", "export \"PASSWORD=***\"; echo $PASSWORD" },
		{ "export 'TOKEN=s3cr3t' ; echo", "export 'TOKEN=***' ; echo" },
		{ "declare TOKEN+=s3cr3t-three; export API_KEY+=s3cr3t-four",
		  "declare TOKEN+=***; export API_KEY+=***" },
		{ "declare -A TOKEN+=([k]=s3cr3t-five [j]='a b'); echo", NULL },
		{ "declare 'SECRET[1]=a b' TOKEN[k]=c", NULL },
		{ "export \"TOKEN=ab$(touch X)cd\"", NULL },
		/* what bash parses again stays when it is not plain text */
		{ "declare -a 'TOKEN=($(touch X) s)'", NULL },
		{ "declare -a \"TOKEN=(`id` s)\"", NULL },
		/* a function in the builtin's place: not a declaration */
		{ "export() { python3 -c \"$1\"; }; export TOKEN='0\nimport os'", NULL },
		{ "declare -x GREETING='a b' x=1", NULL },
	};

	(void)state;
	check_commands(cases, sizeof(cases) / sizeof(cases[0]));
}

/*
 * A value is masked only where it cannot be code (red team 24, H1, M2):
 * token-shaped as a whole (no blank, $ ` ( ) [ ] ; & | < >, quote or
 * backslash), never a name the line expands in eval, sh -c, $((..)),
 * test -v, [[ ]] or a subscript, never the words of a declaration builtin
 * the line may have redefined.  The red team's lines are recorded as
 * typed; the benign twins keep a token masked.
 */
static void
command_masks_only_inert_values(void **state)
{
	static const struct cmd_case cases[] = {
		{ "cd ~/work/a; declare -a TOKEN='([0]=$(touch HIDDEN_A))'; echo a", NULL },
		{ "f() { local -a API_KEY='([1]=$(touch HIDDEN_D))'; }; f; echo d", NULL },
		{ "TOKEN=(['$(touch HIDDEN_S1)']=1); echo s", NULL },
		{ "TOKEN='a[$(touch H1)]'; echo $((TOKEN))", NULL },
		{ "API_KEY='touch H2'; eval \"$API_KEY\"", NULL },
		{ "export PASSWORD='touch H3'; sh -c \"$PASSWORD\"", NULL },
		{ "SECRET='a[$(touch H4)]'; test -v \"$SECRET\"", NULL },
		/* token-shaped, but the line runs it as code or arithmetic */
		{ "API_KEY=reboot; eval \"$API_KEY\"", NULL },
		{ "export PASSWORD=/home/u/p; sh -c \"$PASSWORD\"", NULL },
		{ "export PASSWORD=/home/u/p; bash -lc $PASSWORD", NULL },
		{ "TOKEN=x; echo $((TOKEN))", NULL },
		{ "SECRET=abc; test -v SECRET", NULL },
		{ "TOKEN=k; a[$TOKEN]=1", NULL },
		{ "TOKEN=k; [[ -v TOKEN ]] && echo", NULL },
		{ "TOKEN=/home/u/p; echo $TOKEN | sh", NULL },
		/* M2: a builtin redefined by eval; perl's text joined by + and ! */
		{ "eval 'export() { eval \"${1#*=}\"; }'; export TOKEN='touch HIDDEN_E'", NULL },
		{ "eval 'export() { eval \"${1#*=}\"; }'; export TOKEN=reboot", NULL },
		{ "export() { eval \"${1#*=}\"; }; export TOKEN=reboot", NULL },
		{ "sh -c \"perl -e @TOKEN=system+q!/usr/bin/touch!,q!HIDDEN_G!\"", NULL },
		{ "perl -e TOKEN=system+q!/usr/bin/touch!,q!H!", NULL },
		/* the benign twins: a token is still masked */
		{ "export API_TOKEN=abc123; curl -H \"Authorization: Bearer $API_TOKEN\" https://a.example",
		  "export API_TOKEN=***; curl -H \"Authorization: Bearer $API_TOKEN\" https://a.example" },
		{ "TOKEN=abc make deploy", "TOKEN=*** make deploy" },
		{ "export 'API_KEY=k-1.2_3' DB_PASSWORD=\"p4ss:w0rd@x\"",
		  "export 'API_KEY=***' DB_PASSWORD=\"***\"" },
		{ "TOKEN=abc; echo $((TOKEN_COUNT + 1))", "TOKEN=***; echo $((TOKEN_COUNT + 1))" },
		{ "PASSWORDS=(one two); x", "PASSWORDS=(*** ***); x" },
		{ "tool --api_key=abc --v", "tool --api_key=*** --v" },
	};

	(void)state;
	check_commands(cases, sizeof(cases) / sizeof(cases[0]));
}

/*
 * A private key is not hidden in a command's record (red team 24, M1,
 * L1): no shape tells a key's lines from what a shell runs (a function
 * named cat, a fifo a shell reads, a decoder piped to sh), so every line
 * shaped like a key, its lines, markers and all, stays as typed; a key
 * pasted into a command is recorded (the audit is root's and the gateway
 * group's).  Output keeps its redaction (private_key_goes_whole).
 */
#define B64 "MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"
#define B64B "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK"
static void
command_keys_are_recorded(void **state)
{
	static const char *const cases[] = {
		"echo '-----BEGIN RSA PRIVATE KEY-----'\nrm -rf ~/work/x\n"
		"echo '-----END RSA PRIVATE KEY-----'",
		"echo -----BEGIN PRIVATE KEY-----; sh <<E\n/tmp/payload\nE\n"
		"echo -----END PRIVATE KEY-----",
		"python3 <<E\n-----BEGIN PRIVATE KEY-----\n" B64 "\n-----END PRIVATE KEY-----\nE",
		"echo '-----BEGIN PRIVATE KEY-----\n" B64 "\n-----END PRIVATE KEY-----' | sh",
		/* the red team's: a function named cat, a fifo, a coprocess, a
		 * builtin defined by eval, a file sourced */
		"eval 'cat() { sh; }'; cat <<E\n-----BEGIN PRIVATE KEY-----\n/home/u/work/b/"
		"runmerunmerunmerunmerunmerunmerunme\n-----END PRIVATE KEY-----\nE",
		"mkfifo p; sh p & cat > p <<E\n-----BEGIN PRIVATE KEY-----\n" B64
		"\n-----END PRIVATE KEY-----\nE",
		"coproc sh; cat >&\"${COPROC[1]}\" <<E\n-----BEGIN PRIVATE KEY-----\n" B64
		"\n-----END PRIVATE KEY-----\nE",
		". ~/work/b/lib.sh; tee <<E\n-----BEGIN PRIVATE KEY-----\n" B64
		"\n-----END PRIVATE KEY-----\nE",
		/* L1: key lines that are base64 of a script, decoded and run */
		"cat > k <<E\n-----BEGIN PRIVATE KEY-----\n" B64 "\n-----END PRIVATE KEY-----\nE\n"
		"python3 -c 'import base64; print(base64.b64decode(open(\"k\").read()))' | sh",
		/* what was once hidden as data: now recorded too */
		"cat > k <<'EOF'\n-----BEGIN OPENSSH PRIVATE KEY-----\n" B64 "\n" B64B "\n"
		"AAAAAAAB+/=\n-----END OPENSSH PRIVATE KEY-----\nEOF\ncurl x",
		"ssh-add - <<< '-----BEGIN EC PRIVATE KEY-----\n  " B64 "\n-----END EC PRIVATE KEY-----'",
		"curl -d '{\"k\": \"-----BEGIN EC PRIVATE KEY-----\\nMHcC\\n-----END EC PRIVATE KEY-----\"}' u",
	};
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = ag_redact_command(cases[i], strlen(cases[i]), &len);

		assert_non_null(out);
		assert_string_equal(out, cases[i]);
		free(out);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_shape_is_hidden_at_every_split),
		cmocka_unit_test(command_masks_stay_in_their_word),
		cmocka_unit_test(agentgate_tokens_are_hidden),
		cmocka_unit_test(private_key_goes_whole),
		cmocka_unit_test(private_key_without_end_hides_the_rest),
		cmocka_unit_test(private_key_on_one_line),
		cmocka_unit_test(own_patterns_apply),
		cmocka_unit_test(plain_text_passes_byte_for_byte),
		cmocka_unit_test(secret_across_the_hold_boundary_is_hidden),
		cmocka_unit_test(secret_at_the_boundary_at_every_split),
		cmocka_unit_test(key_marker_at_the_boundary),
		cmocka_unit_test(off_means_no_redactor),
		cmocka_unit_test(command_assignments_are_masked),
		cmocka_unit_test(command_masks_only_inert_values),
		cmocka_unit_test(command_keys_are_recorded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
