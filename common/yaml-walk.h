/* The YAML walker every reader of a YAML file shares (GPU specs, sweeps,
 * the kernel catalogue, model configs): loading one document with
 * libyaml's document API, nodes by index, mapping look-up and the one form
 * of error message, "FILE:LINE:COLUMN: message" with the 1-based position
 * of the offending node, so that a user can fix a hand-written file
 * without reading the reader. What a value may be (an integer in a range,
 * a dtype, a list of names) stays with each reader. Internal. */
#ifndef TC_YAML_WALK_H
#define TC_YAML_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <yaml.h>

#include "input.h"
#include "tc-internal.h"

struct tc_yaml {
    const char *file;    /* named in every message (borrowed) */
    yaml_document_t doc; /* the document read */
    /* the parser stays until tc_yaml_free: tc_yaml_extra reads on */
    yaml_parser_t parser;
    yaml_document_t extra;
    char *text; /* the file read by tc_yaml_load_file, which the parser reads */
    bool have_parser, have_doc, have_extra;
};

/* A syntax error says "YAML syntax error" and, where libyaml knows it,
 * where the construct it broke started: for the GPU specs, which users
 * write by hand. Without it the message is libyaml's problem alone. */
#define TC_YAML_SYNTAX_DETAIL 1u

/* Reads the first document from f (borrowed) or from the len bytes at
 * text into y (zeroed by the call); file names the input in messages.
 * A file is read whole first, and one over max bytes (input.h's cap for
 * its kind, `what` in the message) is refused with TC_ERR_RANGE.
 * Returns TC_OK, TC_ERR_NOMEM, TC_ERR_IO, or TC_ERR_PARSE with the syntax
 * error's position. y is freed with tc_yaml_free whatever the result. */
int tc_yaml_load_file(struct tc_yaml *y, const char *file, FILE *f, uint64_t max, const char *what,
                      unsigned flags);
int tc_yaml_load_text(struct tc_yaml *y, const char *file, const char *text, size_t len,
                      unsigned flags);
/* Reads the stream's next document, for readers that refuse a second one:
 * *root is its root node, NULL at the end of the stream. */
int tc_yaml_extra(struct tc_yaml *y, unsigned flags, yaml_node_t **root);
/* Frees what y holds; a zeroed or half-loaded y is fine. */
void tc_yaml_free(struct tc_yaml *y);

/* The root node (NULL for an empty document) and the node of an index
 * that a sequence item or a mapping pair holds. */
yaml_node_t *tc_yaml_root(struct tc_yaml *y);
yaml_node_t *tc_yaml_node(struct tc_yaml *y, int index);
/* The value of key in mapping map, or NULL; keys that are not scalars are
 * skipped. */
yaml_node_t *tc_yaml_get(struct tc_yaml *y, const yaml_node_t *map, const char *key);

/* The text of a scalar node, NULL for a list, a mapping or no node. */
const char *tc_yaml_scalar(const yaml_node_t *node);
/* Whether node is YAML's null: a plain "", "~", "null", "Null" or "NULL". */
bool tc_yaml_is_null(const yaml_node_t *node);

/* Sets "FILE:LINE:COL: message" (the position of node) and returns err. */
int tc_yaml_error(const struct tc_yaml *y, const yaml_node_t *node, int err, const char *fmt, ...)
    TC_PRINTF(4, 5);
/* "FILE:LINE:COL: FIELD: message", or without "FIELD: " when field is
 * NULL: for readers that name the dotted path of the offending field. */
int tc_yaml_field_error(const struct tc_yaml *y, const yaml_node_t *node, const char *field,
                        int err, const char *fmt, ...) TC_PRINTF(5, 6);
#if defined(__clang_analyzer__) && !defined(TC_DEFINING_ERRORS)
/* as for tc_error (tc-internal.h): for clang-tidy's analyzer only */
#define tc_yaml_error(y, node, err, ...) (tc_yaml_error((y), (node), (err), __VA_ARGS__), (err))
#define tc_yaml_field_error(y, node, field, err, ...)                                              \
    (tc_yaml_field_error((y), (node), (field), (err), __VA_ARGS__), (err))
#endif
/* The same at a mark, for a reader that walks libyaml's events. */
int tc_yaml_mark_error(const char *file, yaml_mark_t mark, int err, const char *fmt, ...)
    TC_PRINTF(4, 5);
/* The syntax error parser met (TC_ERR_PARSE), in the form flags ask for. */
int tc_yaml_syntax_error(const char *file, const yaml_parser_t *parser, unsigned flags);

#endif
