/* The shared YAML walker (yaml-walk.h): loading, look-up and the position
 * every message carries. libyaml's marks are 0-based; messages are 1-based
 * like an editor's. */
/* defines the YAML error functions: the analyzer macros stay off */
#define TC_DEFINING_ERRORS
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "yaml-walk.h"

static int load(struct tc_yaml *y, unsigned flags)
{
    if (!yaml_parser_load(&y->parser, &y->doc))
        return tc_yaml_syntax_error(y->file, &y->parser, flags);
    y->have_doc = true;
    return TC_OK;
}

static int init(struct tc_yaml *y, const char *file)
{
    memset(y, 0, sizeof(*y));
    y->file = file;
    if (!yaml_parser_initialize(&y->parser))
        return tc_error(TC_ERR_NOMEM, "out of memory");
    y->have_parser = true;
    return TC_OK;
}

int tc_yaml_load_file(struct tc_yaml *y, const char *file, FILE *f, uint64_t max, const char *what,
                      unsigned flags)
{
    int err = init(y, file);
    size_t len;

    if (err < 0)
        return err;
    /* read whole (and capped) first: libyaml reading the stream itself
     * would grow its tree without bound on an endless input */
    if ((err = tc_input_read(file, f, max, what, &y->text, &len)) < 0)
        return err;
    yaml_parser_set_input_string(&y->parser, (const unsigned char *)y->text, len);
    return load(y, flags);
}

int tc_yaml_load_text(struct tc_yaml *y, const char *file, const char *text, size_t len,
                      unsigned flags)
{
    int err = init(y, file);

    if (err < 0)
        return err;
    yaml_parser_set_input_string(&y->parser, (const unsigned char *)text, len);
    return load(y, flags);
}

int tc_yaml_extra(struct tc_yaml *y, unsigned flags, yaml_node_t **root)
{
    *root = NULL;
    if (y->have_extra) {
        yaml_document_delete(&y->extra);
        y->have_extra = false;
    }
    if (!yaml_parser_load(&y->parser, &y->extra))
        return tc_yaml_syntax_error(y->file, &y->parser, flags);
    y->have_extra = true;
    *root = yaml_document_get_root_node(&y->extra);
    return TC_OK;
}

void tc_yaml_free(struct tc_yaml *y)
{
    if (y->have_extra)
        yaml_document_delete(&y->extra);
    if (y->have_doc)
        yaml_document_delete(&y->doc);
    if (y->have_parser)
        yaml_parser_delete(&y->parser);
    y->have_extra = y->have_doc = y->have_parser = false;
    free(y->text);
    y->text = NULL;
}

yaml_node_t *tc_yaml_root(struct tc_yaml *y)
{
    return y->have_doc ? yaml_document_get_root_node(&y->doc) : NULL;
}

yaml_node_t *tc_yaml_node(struct tc_yaml *y, int index)
{
    return yaml_document_get_node(&y->doc, index);
}

yaml_node_t *tc_yaml_get(struct tc_yaml *y, const yaml_node_t *map, const char *key)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const char *k = tc_yaml_scalar(tc_yaml_node(y, p->key));

        if (k && !strcmp(k, key))
            return tc_yaml_node(y, p->value);
    }
    return NULL;
}

const char *tc_yaml_scalar(const yaml_node_t *node)
{
    return node && node->type == YAML_SCALAR_NODE ? (const char *)node->data.scalar.value : NULL;
}

bool tc_yaml_is_null(const yaml_node_t *node)
{
    const char *s;

    if (!node || node->type != YAML_SCALAR_NODE ||
        node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    s = tc_yaml_scalar(node);
    return !*s || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 || strcmp(s, "Null") == 0 ||
           strcmp(s, "NULL") == 0;
}

static int vmark_error(const char *file, yaml_mark_t mark, const char *field, int err,
                       const char *fmt, va_list ap) TC_PRINTF(5, 0);

static int vmark_error(const char *file, yaml_mark_t mark, const char *field, int err,
                       const char *fmt, va_list ap)
{
    char msg[1024];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (field)
        return tc_error(err, "%s:%zu:%zu: %s: %s", file, mark.line + 1, mark.column + 1, field,
                        msg);
    return tc_error(err, "%s:%zu:%zu: %s", file, mark.line + 1, mark.column + 1, msg);
}

int tc_yaml_error(const struct tc_yaml *y, const yaml_node_t *node, int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    err = vmark_error(y->file, node->start_mark, NULL, err, fmt, ap);
    va_end(ap);
    return err;
}

int tc_yaml_field_error(const struct tc_yaml *y, const yaml_node_t *node, const char *field,
                        int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    err = vmark_error(y->file, node->start_mark, field, err, fmt, ap);
    va_end(ap);
    return err;
}

int tc_yaml_mark_error(const char *file, yaml_mark_t mark, int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    err = vmark_error(file, mark, NULL, err, fmt, ap);
    va_end(ap);
    return err;
}

int tc_yaml_syntax_error(const char *file, const yaml_parser_t *parser, unsigned flags)
{
    yaml_mark_t at = parser->problem_mark;

    /* libyaml names no problem when an allocation failed */
    if (parser->error == YAML_MEMORY_ERROR)
        return tc_error(TC_ERR_NOMEM, "%s: out of memory while parsing the YAML", file);
    if (!(flags & TC_YAML_SYNTAX_DETAIL))
        return tc_yaml_mark_error(file, at, TC_ERR_PARSE, "%s",
                                  parser->problem ? parser->problem : "malformed YAML");
    if (parser->context)
        return tc_yaml_mark_error(file, at, TC_ERR_PARSE,
                                  "YAML syntax error: %s %s (which started at line %zu, "
                                  "column %zu)",
                                  parser->problem ? parser->problem : "unknown problem",
                                  parser->context, parser->context_mark.line + 1,
                                  parser->context_mark.column + 1);
    return tc_yaml_mark_error(file, at, TC_ERR_PARSE, "YAML syntax error: %s",
                              parser->problem ? parser->problem : "unknown problem");
}
