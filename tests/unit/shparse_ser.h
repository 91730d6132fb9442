/*
 * shparse_ser.h - a one-line rendering of a parse tree for the parser's
 * tests: compact enough for a table, exact enough to show the structure.
 *
 *   [A=1 echo a 'b c' >f]	simple command (assignments, words, redirections)
 *   X | Y, X |& Y, ! X, time X	pipelines;  X && Y, X || Y (left-assoc)
 *   X; Y &			lists
 *   ( L ) { L } if .. fi ...	compound commands, written like bash
 *   ${x:-w} $(L) `L` $((e)) <(L)	expansions inside words
 *   <G:*> <B:{a,b}> <~user>	glob, brace and tilde parts
 * Literal words print their value after quote removal, in '...' when they
 * contain a blank or a character that would read as structure here.
 */
#ifndef SHPARSE_SER_H
#define SHPARSE_SER_H

#include <stdio.h>
#include <string.h>

#include "parse/shparse.h"

static void ser_node(FILE *, const struct ag_sh_node *);

static void
ser_word(FILE *fp, const struct ag_sh_word *w)
{
	size_t i, n;
	char *lit;

	if (w == NULL) {
		fputs("<null>", fp);
		return;
	}
	if ((lit = ag_sh_word_literal(w, &n)) != NULL) {
		if (n == 0 || strpbrk(lit, " \t\n'\"[]{}()<>|;&$`\\") != NULL)
			fprintf(fp, "'%s'", lit);
		else
			fputs(lit, fp);
		free(lit);
		return;
	}
	for (i = 0; i < w->nparts; i++) {
		const struct ag_sh_part *pt = &w->parts[i];

		switch (pt->type) {
		case AG_SH_P_LIT:
			fputs(pt->text, fp);
			break;
		case AG_SH_P_PARAM:
			fputs("${", fp);
			if (pt->indirect)
				fputc('!', fp);
			if (pt->length)
				fputc('#', fp);
			fputs(pt->text, fp);
			if (pt->subscript != NULL) {
				fputc('[', fp);
				ser_word(fp, pt->subscript);
				fputc(']', fp);
			}
			if (pt->op != NULL)
				fputs(pt->op, fp);
			if (pt->operand != NULL)
				ser_word(fp, pt->operand);
			if (pt->operand2 != NULL) {
				fputc('/', fp);
				ser_word(fp, pt->operand2);
			}
			fputc('}', fp);
			break;
		case AG_SH_P_CMDSUB:
			fputs(pt->backtick ? "`" : "$(", fp);
			ser_node(fp, pt->body);
			fputs(pt->backtick ? "`" : ")", fp);
			break;
		case AG_SH_P_PROCSUB:
			fprintf(fp, "%c(", pt->dir);
			ser_node(fp, pt->body);
			fputc(')', fp);
			break;
		case AG_SH_P_ARITH:
			fputs("$((", fp);
			ser_word(fp, pt->expr);
			fputs("))", fp);
			break;
		case AG_SH_P_GLOB:
			fprintf(fp, "<G:%s>", pt->text);
			break;
		case AG_SH_P_BRACE:
			fprintf(fp, "<B:%s>", pt->text);
			break;
		case AG_SH_P_TILDE:
			fprintf(fp, "<~%s>", pt->text);
			break;
		}
	}
}

static void
ser_redirs(FILE *fp, const struct ag_sh_node *n, int lead)
{
	static const char *const ops[] = {
		"<", ">", ">>", ">|", "<>", "<<", "<<-", "<<<", "&>", "&>>",
		"<&", ">&"
	};
	size_t i;

	for (i = 0; i < n->nredirs; i++) {
		const struct ag_sh_redir *r = &n->redirs[i];

		if (lead || i > 0)
			fputc(' ', fp);
		if (r->fd >= 0)
			fprintf(fp, "%d", r->fd);
		if (r->fdvar != NULL)
			fprintf(fp, "{%s}", r->fdvar);
		fputs(ops[r->op], fp);
		if (r->delim != NULL) {
			fprintf(fp, "%s%s{", r->heredoc_quoted ? "'" : "", r->delim);
			ser_word(fp, r->target);
			fputc('}', fp);
		} else
			ser_word(fp, r->target);
	}
}

static void
ser_list(FILE *fp, const struct ag_sh_node *n)
{
	size_t i;

	if (n == NULL) {
		fputs("<null>", fp);
		return;
	}
	if (n->type != AG_SH_LIST) {
		ser_node(fp, n);
		return;
	}
	for (i = 0; i < n->nkids; i++) {
		if (i > 0)
			fputs("; ", fp);
		ser_node(fp, n->kids[i]);
		if (n->background != NULL && n->background[i])
			fputs(" &", fp);
	}
}

static void
ser_node(FILE *fp, const struct ag_sh_node *n)
{
	size_t i, k;
	int sp = 0;

	if (n == NULL) {
		fputs("<null>", fp);
		return;
	}
	switch (n->type) {
	case AG_SH_LIST:
		ser_list(fp, n);
		return;
	case AG_SH_SIMPLE:
		fputc('[', fp);
		for (i = 0; i < n->nassigns; i++) {
			const struct ag_sh_assign *a = &n->assigns[i];

			if (sp++)
				fputc(' ', fp);
			fputs(a->name, fp);
			if (a->subscript != NULL) {
				fputc('[', fp);
				ser_word(fp, a->subscript);
				fputc(']', fp);
			}
			fputs(a->append ? "+=" : "=", fp);
			if (a->is_array) {
				fputc('(', fp);
				for (k = 0; k < a->nelems; k++) {
					if (k > 0)
						fputc(' ', fp);
					ser_word(fp, a->elems[k]);
				}
				fputc(')', fp);
			} else
				ser_word(fp, a->value);
		}
		for (i = 0; i < n->nwords; i++) {
			if (sp++)
				fputc(' ', fp);
			ser_word(fp, n->words[i]);
		}
		ser_redirs(fp, n, sp);
		fputc(']', fp);
		return;
	case AG_SH_PIPELINE:
		if (n->negated)
			fputs("! ", fp);
		if (n->timed)
			fputs(n->timed == 2 ? "time -p " : "time ", fp);
		for (i = 0; i < n->nkids; i++) {
			if (i > 0)
				fputs(n->pipe_stderr[i - 1] ? " |& " : " | ", fp);
			ser_node(fp, n->kids[i]);
		}
		return;
	case AG_SH_AND:
	case AG_SH_OR:
		ser_node(fp, n->kids[0]);
		fputs(n->type == AG_SH_AND ? " && " : " || ", fp);
		ser_node(fp, n->kids[1]);
		return;
	case AG_SH_SUBSHELL:
		fputs("( ", fp);
		ser_list(fp, n->kids[0]);
		fputs(" )", fp);
		break;
	case AG_SH_GROUP:
		fputs("{ ", fp);
		ser_list(fp, n->kids[0]);
		fputs(" }", fp);
		break;
	case AG_SH_IF:
		for (i = 0; i + 1 < n->nkids; i += 2) {
			fputs(i == 0 ? "if " : " elif ", fp);
			ser_list(fp, n->kids[i]);
			fputs(" then ", fp);
			ser_list(fp, n->kids[i + 1]);
		}
		if (n->has_else) {
			fputs(" else ", fp);
			ser_list(fp, n->kids[n->nkids - 1]);
		}
		fputs(" fi", fp);
		break;
	case AG_SH_WHILE:
	case AG_SH_UNTIL:
		fputs(n->type == AG_SH_WHILE ? "while " : "until ", fp);
		ser_list(fp, n->kids[0]);
		fputs(" do ", fp);
		ser_list(fp, n->kids[1]);
		fputs(" done", fp);
		break;
	case AG_SH_FOR:
	case AG_SH_SELECT:
		fprintf(fp, "%s %s", n->type == AG_SH_FOR ? "for" : "select",
		    n->name);
		if (n->words != NULL) {
			fputs(" in", fp);
			for (i = 0; i < n->nwords; i++) {
				fputc(' ', fp);
				ser_word(fp, n->words[i]);
			}
		}
		fputs(" do ", fp);
		ser_list(fp, n->kids[0]);
		fputs(" done", fp);
		break;
	case AG_SH_ARITH_FOR:
		fputs("for ((", fp);
		for (i = 0; i < n->nwords; i++) {
			if (i > 0)
				fputc(';', fp);
			ser_word(fp, n->words[i]->parts[0].expr);
		}
		fputs(")) do ", fp);
		ser_list(fp, n->kids[0]);
		fputs(" done", fp);
		break;
	case AG_SH_CASE:
		fputs("case ", fp);
		ser_word(fp, n->words[0]);
		fputs(" in", fp);
		for (i = 0; i < n->nitems; i++) {
			const struct ag_sh_case_item *it = &n->items[i];

			fputc(' ', fp);
			for (k = 0; k < it->npatterns; k++) {
				if (k > 0)
					fputc('|', fp);
				ser_word(fp, it->patterns[k]);
			}
			fputs(") ", fp);
			if (it->body != NULL) {
				ser_list(fp, it->body);
				fputc(' ', fp);
			}
			fputs(it->term, fp);
		}
		fputs(" esac", fp);
		break;
	case AG_SH_DBRACKET:
		fputs("[[", fp);
		for (i = 0; i < n->nwords; i++) {
			fputc(' ', fp);
			ser_word(fp, n->words[i]);
		}
		fputs(" ]]", fp);
		break;
	case AG_SH_ARITH_CMD:
		fputs("((", fp);
		ser_word(fp, n->words[0]->parts[0].expr);
		fputs("))", fp);
		break;
	case AG_SH_FUNCDEF:
		fprintf(fp, "function %s ", n->name);
		ser_node(fp, n->kids[0]);
		return;
	case AG_SH_COPROC:
		fprintf(fp, "coproc%s%s%s ", n->name ? "[" : "",
		    n->name ? n->name : "", n->name ? "]" : "");
		ser_node(fp, n->kids[0]);
		return;
	}
	ser_redirs(fp, n, 1);
}

/* The rendering of a whole tree into buf (truncated to fit). */
static const char *
ser_tree(const struct ag_sh_node *n, char *buf, size_t len)
{
	FILE *fp;

	memset(buf, 0, len);
	fp = fmemopen(buf, len, "w");

	if (fp == NULL)
		return "<fmemopen failed>";
	ser_node(fp, n);
	fclose(fp);
	buf[len - 1] = '\0';
	return buf;
}

#endif
