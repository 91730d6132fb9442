/*
 * sshlib.h - libssh, loaded the first time the gateway speaks SSH itself.
 *
 * Only `agentgate serve` and a session with an upstream (bastion mode) use
 * libssh; a ForceCommand session would otherwise map it, and the Kerberos
 * and GSSAPI libraries behind it, at every start (about 1 ms a connection;
 * issue 20).  Callers write ag_ssh.NAME(...) for libssh's NAME, after
 * ag_sshlib_load() succeeded; the declarations stay libssh's own headers.
 */
#ifndef AG_SSHLIB_H
#define AG_SSHLIB_H

#include <libssh/libssh.h>
#include <libssh/server.h>
#include <libssh/callbacks.h>

#include "common/err.h"

/* every libssh function the gateway calls */
#define AG_SSHLIB_FUNCS(X) \
	X(ssh_bind_accept_fd) X(ssh_bind_free) X(ssh_bind_new) \
	X(ssh_bind_options_set) X(ssh_channel_change_pty_size) X(ssh_channel_close) \
	X(ssh_channel_free) X(ssh_channel_get_exit_status) X(ssh_channel_is_closed) \
	X(ssh_channel_is_eof) X(ssh_channel_new) X(ssh_channel_open_session) \
	X(ssh_channel_read) X(ssh_channel_read_nonblocking) \
	X(ssh_channel_request_exec) X(ssh_channel_request_pty_size) \
	X(ssh_channel_request_send_exit_signal) \
	X(ssh_channel_request_send_exit_status) X(ssh_channel_request_send_signal) \
	X(ssh_channel_send_eof) X(ssh_channel_window_size) X(ssh_channel_write) \
	X(ssh_channel_write_stderr) X(ssh_clean_pubkey_hash) X(ssh_connect) \
	X(ssh_disconnect) X(ssh_event_add_fd) X(ssh_event_add_session) \
	X(ssh_event_dopoll) X(ssh_event_free) X(ssh_event_new) \
	X(ssh_event_remove_fd) X(ssh_finalize) X(ssh_free) X(ssh_get_error) \
	X(ssh_get_fd) X(ssh_get_fingerprint_hash) X(ssh_get_publickey_hash) \
	X(ssh_get_server_publickey) X(ssh_handle_key_exchange) X(ssh_init) \
	X(ssh_is_connected) X(ssh_key_cmp) X(ssh_key_free) X(ssh_key_type) \
	X(ssh_key_type_from_name) X(ssh_key_type_to_char) \
	X(ssh_message_auth_interactive_request) \
	X(ssh_message_auth_kbdint_is_response) X(ssh_message_auth_password) \
	X(ssh_message_auth_pubkey) X(ssh_message_auth_publickey_state) \
	X(ssh_message_auth_reply_pk_ok_simple) X(ssh_message_auth_reply_success) \
	X(ssh_message_auth_set_methods) X(ssh_message_auth_user) X(ssh_message_free) \
	X(ssh_message_get) X(ssh_message_reply_default) X(ssh_message_subtype) \
	X(ssh_message_type) X(ssh_new) X(ssh_options_set) \
	X(ssh_pki_export_privkey_file) X(ssh_pki_export_privkey_to_pubkey) \
	X(ssh_pki_export_pubkey_base64) X(ssh_pki_generate) \
	X(ssh_pki_import_privkey_file) X(ssh_pki_import_pubkey_base64) \
	X(ssh_remove_channel_callbacks) X(ssh_send_keepalive) \
	X(ssh_session_is_known_server) X(ssh_set_auth_methods) X(ssh_set_blocking) \
	X(ssh_set_channel_callbacks) X(ssh_set_message_callback) \
	X(ssh_set_server_callbacks) X(ssh_string_free_char) \
	X(ssh_userauth_kbdint_getanswer) X(ssh_userauth_kbdint_getnanswers) \
	X(ssh_userauth_publickey)

/* (a few message accessors the server needs are deprecated in libssh) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
struct ag_sshlib {
#define AG_SSHLIB_MEMBER(f)	__typeof__(f) *f;
	AG_SSHLIB_FUNCS(AG_SSHLIB_MEMBER)
#undef AG_SSHLIB_MEMBER
};
#pragma GCC diagnostic pop

extern struct ag_sshlib ag_ssh;

/* Load libssh once: 0, or -1 with err saying why (ag_ssh is then unusable). */
int	ag_sshlib_load(struct ag_err *err);

#endif
