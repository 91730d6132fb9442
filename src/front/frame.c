/* frame.c - a session's beginning and end, for every front end; see frame.h */
#include "agconfig.h"

#include <stdio.h>
#include <string.h>

#include "common/config.h"
#include "common/log.h"
#include "common/proctitle.h"
#include "front/frame.h"
#include "record/audit.h"
#include "record/live.h"

int
ag_frame_open(struct ag_frame *f, const struct ag_config *cfg, const struct ag_audit_info *info,
    int flags, struct ag_err *err)
{
	memset(f, 0, sizeof(*f));
	f->cfg = cfg;
	f->info = *info;
	f->flags = flags;
	/* serve opens it while still root, so one audit file serves every user */
	if ((f->audit = ag_audit_open(&cfg->gw.audit, info, err)) == NULL) {
		if (flags & AG_FRAME_TELL)
			ag_err_print(stderr, err);
		else
			ag_log(LOG_ERR, "%s", err->msg);
		return -1;
	}
	return 0;
}

void
ag_frame_start(struct ag_frame *f)
{
	const struct ag_audit_info *i = &f->info;
	struct ag_err err;

	ag_err_clear(&err);
	if (ag_audit_session_start(f->audit, &err) < 0) {
		/* a client that can be told is, when its commands will be
		 * refused for it (core/command.c admit) */
		if (!(f->flags & AG_FRAME_TELL))
			ag_log(LOG_ERR, "%s", err.msg);
		else if (ag_audit_required(f->audit))
			fprintf(stderr, "agentgate: %s; commands will be refused while the "
			    "audit log cannot be written\n", err.msg);
	}
	ag_log(LOG_INFO, "session %s: user %s%s%s, profile %s, %s mode%s%s",
	    ag_audit_session_id(f->audit), i->user, i->identity ? ", identity " : "",
	    i->identity ? i->identity : "", i->profile, i->mode,
	    i->client != NULL && i->client[0] ? ", from " : "", i->client ? i->client : "");
}

void
ag_frame_enter(struct ag_frame *f)
{
	const char *id = ag_audit_session_id(f->audit);

	ag_proctitle_set("agentgate: %s@%s [%.8s] %s", f->info.identity ? f->info.identity : "-",
	    f->info.user, id, f->info.mode);
	ag_live_begin(id, &f->info, f->cfg->path);
	if (f->flags & AG_FRAME_REAP) {
		snprintf(f->witness, sizeof(f->witness), "the gateway of session %.8s", id);
		ag_live_reap(f->cfg->path, &f->cfg->gw.audit, f->witness);
	}
}

void
ag_frame_close(struct ag_frame *f, int status, unsigned long ncommands)
{
	struct ag_err err;

	ag_err_clear(&err);
	/* a witness that saw this gateway gone has written it already */
	if (ag_live_end())
		(void)ag_audit_session_end(f->audit, status, ncommands, &err);
	if (f->flags & AG_FRAME_REAP)
		ag_live_reap(f->cfg->path, &f->cfg->gw.audit, f->witness);
}

void
ag_frame_free(struct ag_frame *f)
{
	(void)ag_live_end();
	ag_audit_close(f->audit);
	f->audit = NULL;
}

void
ag_frame_auth_failure(struct ag_audit *a, const struct ag_config *cfg,
    const struct ag_audit_info *info, const char *stage, const char *why,
    const char *reason_class)
{
	struct ag_audit *own = NULL;
	struct ag_err err;

	ag_err_clear(&err);
	if (a == NULL && (a = own = ag_audit_open(&cfg->gw.audit, info, &err)) == NULL)
		return;
	if (ag_audit_auth_failure(a, stage, why, reason_class, &err) < 0)
		ag_log(LOG_ERR, "%s", err.msg);
	ag_audit_close(own);
}
