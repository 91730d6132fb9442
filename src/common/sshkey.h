/*
 * sshkey.h - SSH public keys and certificates in OpenSSH's text form
 * ("TYPE BASE64"), one strict decoder for the policy loader (identities'
 * keys) and the PAM module (the key sshd accepted, SSH_AUTH_INFO_0).
 */
#ifndef AG_SSHKEY_H
#define AG_SSHKEY_H

#include <stddef.h>

#include "common/err.h"

#define AG_SSHKEY_MAX_B64	(16 * 1024)	/* certificates fit */

/*
 * Decode key text ("TYPE" and "BASE64": strict base64, a blob that names
 * TYPE, and for the plain types we know exactly their fields) into its SSH
 * wire blob (malloc'd, caller frees).  When the type is a certificate,
 * *keyblob (if keyblob is not NULL) receives the blob of the certified
 * plain key, or NULL for a certificate type this code does not know.  0 ok,
 * -1 with err (which may be NULL).
 */
int	ag_sshkey_decode(const char *type, size_t typelen, const char *b64, size_t b64len,
	    unsigned char **blob, size_t *bloblen,
	    unsigned char **keyblob, size_t *keybloblen, struct ag_err *err);

/* 1 when a policy file may name this plain key type. */
int	ag_sshkey_policy_type(const char *type, size_t len);

/*
 * The fingerprint of the first key of an SSH_AUTH_INFO_0 text ("publickey
 * TYPE BASE64" lines) as ssh-keygen -l prints it, "SHA256:" and unpadded
 * base64 of the SHA-256 of the key blob (a certificate: of the
 * certificate).  0 with out set, -1 (out "") when there is no such line.
 */
int	ag_sshkey_fingerprint(const char *auth_info, char *out, size_t outlen);

#endif
