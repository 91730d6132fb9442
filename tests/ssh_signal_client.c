/*
 * ssh_signal_client - a small libssh client for integration/server.sh.
 * OpenSSH's ssh has no way to send a "signal" channel request, so this
 * one does: it runs COMMAND over an exec channel, sends SIGNAL (a name
 * such as INT) once the command's output holds MARK (so the command is
 * known to run: no guessing with a delay), relays the output to stdout
 * and exits with the command's exit status (128+N for an exit-signal).
 *
 *   ssh_signal_client HOST PORT USER KEYFILE MARK SIGNAL COMMAND
 */
#include "agconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libssh/libssh.h>

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
main(int argc, char **argv)
{
	ssh_session s;
	ssh_channel ch;
	ssh_key key = NULL;
	long long start;
	int port, sent = 0, status;
	char buf[4096], seen[8192] = "";
	size_t nseen = 0;

	if (argc != 8) {
		fprintf(stderr, "usage: %s HOST PORT USER KEYFILE MARK SIGNAL COMMAND\n",
		    argv[0]);
		return 2;
	}
	port = atoi(argv[2]);
	if ((s = ssh_new()) == NULL)
		return 2;
	ssh_options_set(s, SSH_OPTIONS_HOST, argv[1]);
	ssh_options_set(s, SSH_OPTIONS_PORT, &port);
	ssh_options_set(s, SSH_OPTIONS_USER, argv[3]);
	if (ssh_connect(s) != SSH_OK) {
		fprintf(stderr, "connect: %s\n", ssh_get_error(s));
		return 2;
	}
	/* the test server's host key is throwaway: not checked here */
	if (ssh_pki_import_privkey_file(argv[4], NULL, NULL, NULL, &key) != SSH_OK ||
	    ssh_userauth_publickey(s, NULL, key) != SSH_AUTH_SUCCESS) {
		fprintf(stderr, "auth: %s\n", ssh_get_error(s));
		return 2;
	}
	if ((ch = ssh_channel_new(s)) == NULL || ssh_channel_open_session(ch) != SSH_OK ||
	    ssh_channel_request_exec(ch, argv[7]) != SSH_OK) {
		fprintf(stderr, "exec: %s\n", ssh_get_error(s));
		return 2;
	}
	start = now_ms();
	while (!ssh_channel_is_eof(ch)) {
		int n = ssh_channel_read_timeout(ch, buf, sizeof(buf), 0, 100);

		if (n == SSH_ERROR)
			break;
		if (n > 0) {
			size_t k = (size_t)n < sizeof(seen) - 1 - nseen ? (size_t)n :
			    sizeof(seen) - 1 - nseen;

			fwrite(buf, 1, (size_t)n, stdout);
			memcpy(seen + nseen, buf, k);
			nseen += k;
			seen[nseen] = '\0';
		}
		fflush(stdout);
		if (!sent && strstr(seen, argv[5]) != NULL) {
			if (ssh_channel_request_send_signal(ch, argv[6]) != SSH_OK) {
				fprintf(stderr, "signal: %s\n", ssh_get_error(s));
				return 2;
			}
			sent = 1;
		}
		/* only if the mark or the end never comes */
		if (now_ms() - start > 60000) {
			fprintf(stderr, "timeout\n");
			return 3;
		}
	}
	status = ssh_channel_get_exit_status(ch);
	ssh_channel_close(ch);
	ssh_channel_free(ch);
	ssh_key_free(key);
	ssh_disconnect(s);
	ssh_free(s);
	return status < 0 ? 4 : status;
}
