/*
 * decision_json.c - a decision on a line as JSON (decision_json.h).  The
 * protocols' explain once had a form of its own, without the rules'
 * labels or where each command starts; an agent reading one and an admin
 * reading the other now see the same document.
 */
#include "agconfig.h"

#include <stdint.h>

#include <json-c/json.h>

#include "policy/decision_json.h"

static void
put_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v != NULL ? json_object_new_string(v) : NULL);
}

/* The label of rules (their program shown), where there is more to say. */
static void
put_label(json_object *o, const struct ag_config *cfg, const char *rules)
{
	char label[1024];

	if (cfg != NULL && rules != NULL && ag_config_rule_labels(cfg, rules, label, sizeof(label)))
		put_str(o, "rule_label", label);
}

json_object *
ag_decision_json(const struct ag_decision *d, const struct ag_config *cfg)
{
	json_object *o = json_object_new_object(), *cmds = json_object_new_array();
	size_t i;

	if (o == NULL || cmds == NULL)
		goto nomem;
	put_str(o, "decision", ag_verdict_name(d->verdict));
	put_str(o, "reason", d->reason);
	put_str(o, "rule", d->rule);
	put_label(o, cfg, d->rule);
	json_object_object_add(o, "parse_error", json_object_new_boolean(d->parse_error));
	json_object_object_add(o, "incomplete", json_object_new_boolean(d->incomplete));
	if (d->would_run)
		json_object_object_add(o, "would_run", json_object_new_boolean(1));
	if (d->approve) {
		json_object_object_add(o, "approve", json_object_new_boolean(1));
		json_object_object_add(o, "approve_rule", json_object_new_string(d->approve_rule));
	}
	for (i = 0; i < d->ncmds; i++) {
		const struct ag_policy_cmd *c = &d->cmds[i];
		json_object *jc = json_object_new_object();

		if (jc == NULL)
			goto nomem;
		put_str(jc, "name", c->name);
		put_str(jc, "path", c->path);
		put_str(jc, "text", c->text);
		if (c->sub != NULL)
			put_str(jc, "subcommand", c->sub);
		put_str(jc, "verdict", ag_verdict_name(c->verdict));
		put_str(jc, "reason", c->reason != NULL ? c->reason : "");
		put_str(jc, "rule", c->rule != NULL ? c->rule : "");
		put_label(jc, cfg, c->rule);
		json_object_object_add(jc, "offset", json_object_new_int64((int64_t)c->off));
		json_object_array_add(cmds, jc);
	}
	json_object_object_add(o, "commands", cmds);
	return o;
nomem:
	json_object_put(o);
	json_object_put(cmds);
	return NULL;
}
