/* The base layer's capped readers (common/input.c) and the CSV reader's
 * record cap and byte count (common/csv.c), at their edges: an input of
 * exactly the cap is read, one byte more is refused, from a regular file
 * (by its size) and from a pipe (by counting); a line's cap the same; the
 * bytes a CSV reader counts are the bytes of the input, byte order mark,
 * quotes and read-ahead included. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csv.h"
#include "input.h"
#include "tc-internal.h"

/* A temporary file holding n bytes of c, rewound. */
static FILE *file_of(size_t n, char c)
{
    FILE *f = tmpfile();
    char *buf = malloc(n + 1);

    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(buf);
    memset(buf, c, n);
    ck_assert_uint_eq(fwrite(buf, 1, n, f), n);
    free(buf);
    rewind(f);
    return f;
}

/* The read end of a pipe that holds n bytes of c (n within the pipe's
 * buffer), its write end closed: a stream whose size no stat tells. */
static FILE *pipe_of(size_t n, char c)
{
    int fd[2];
    char *buf = malloc(n + 1);
    FILE *f;

    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(pipe(fd), 0);
    memset(buf, c, n);
    ck_assert_int_eq(write(fd[1], buf, n), (ssize_t)n);
    close(fd[1]);
    free(buf);
    f = fdopen(fd[0], "r");
    ck_assert_ptr_nonnull(f);
    return f;
}

START_TEST(read_whole)
{
    for (int piped = 0; piped < 2; piped++) {
        FILE *f = piped ? pipe_of(1000, 'x') : file_of(1000, 'x');
        char *text;
        size_t len;

        ck_assert_int_eq(tc_input_read("in", f, 1000, "a test input", &text, &len), TC_OK);
        ck_assert_uint_eq(len, 1000);
        ck_assert_int_eq(text[999], 'x');
        ck_assert_int_eq(text[1000], '\0');
        free(text);
        fclose(f);

        f = piped ? pipe_of(1001, 'x') : file_of(1001, 'x');
        ck_assert_int_eq(tc_input_read("in", f, 1000, "a test input", &text, &len), TC_ERR_RANGE);
        ck_assert_ptr_null(text);
        ck_assert_msg(strstr(tc_last_error(),
                             piped ? "in: more than 0 MiB read, over the limit of a test input"
                                   : "in: the file is 1001 bytes (0.0 MiB), over the 0 MiB "
                                     "limit of a test input") != NULL,
                      "%s", tc_last_error());
        fclose(f);
    }
}
END_TEST

START_TEST(read_empty)
{
    FILE *f = file_of(0, 'x');
    char *text;
    size_t len = 1;

    ck_assert_int_eq(tc_input_read("in", f, 10, "a test input", &text, &len), TC_OK);
    ck_assert_uint_eq(len, 0);
    ck_assert_str_eq(text, "");
    free(text);
    fclose(f);
}
END_TEST

START_TEST(lines)
{
    static const char text[] = "abc\n\nxyz";
    FILE *f = tmpfile();
    char *buf = NULL;
    size_t cap = 0, len;

    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    rewind(f);
    ck_assert_int_eq(tc_input_line(f, 3, "a test line", &buf, &cap, &len), 1);
    ck_assert_str_eq(buf, "abc");
    ck_assert_int_eq(tc_input_line(f, 3, "a test line", &buf, &cap, &len), 1);
    ck_assert_uint_eq(len, 0);
    ck_assert_str_eq(buf, "");
    /* the last line needs no newline */
    ck_assert_int_eq(tc_input_line(f, 3, "a test line", &buf, &cap, &len), 1);
    ck_assert_str_eq(buf, "xyz");
    ck_assert_int_eq(tc_input_line(f, 3, "a test line", &buf, &cap, &len), 0);
    fclose(f);

    /* one byte over the cap, with and without a newline after it */
    for (int nl = 0; nl < 2; nl++) {
        f = tmpfile();
        ck_assert_ptr_nonnull(f);
        fputs(nl ? "abcd\n" : "abcd", f);
        rewind(f);
        ck_assert_int_eq(tc_input_line(f, 3, "a test line", &buf, &cap, &len), TC_ERR_RANGE);
        ck_assert_msg(strstr(tc_last_error(), "over the limit of a test line") != NULL, "%s",
                      tc_last_error());
        fclose(f);
    }
    free(buf);
}
END_TEST

START_TEST(csv_record_cap)
{
    FILE *f = file_of(TC_INPUT_RECORD_MAX + 1, 'a');
    struct tc_csv *csv = tc_csv_new(f, "big.csv");
    char **fields;
    int n;

    ck_assert_int_eq(tc_csv_next(csv, &n, &fields), TC_ERR_RANGE);
    ck_assert_msg(strstr(tc_last_error(), "big.csv:1: a record of more than 1 MiB") != NULL, "%s",
                  tc_last_error());
    tc_csv_free(csv);
    fclose(f);

    /* a record of the cap's size, its NUL included, is read */
    f = file_of(TC_INPUT_RECORD_MAX - 1, 'a');
    csv = tc_csv_new(f, "max.csv");
    ck_assert_int_eq(tc_csv_next(csv, &n, &fields), 1);
    ck_assert_uint_eq(strlen(fields[0]), TC_INPUT_RECORD_MAX - 1);
    tc_csv_free(csv);
    fclose(f);
}
END_TEST

START_TEST(csv_bytes)
{
    static const char *const inputs[] = {
        "a,b\n1,2\n",
        "\357\273\277a,b\r\n\"x,\"\"y\",2\n\n3,4", /* with a byte order mark */
        "\357\273",                                /* the start of a mark alone */
        "",
    };

    for (size_t i = 0; i < TC_ARRAY_SIZE(inputs); i++) {
        FILE *f = tmpfile();
        struct tc_csv *csv;
        char **fields;
        int n, rc;

        ck_assert_ptr_nonnull(f);
        fputs(inputs[i], f);
        rewind(f);
        csv = tc_csv_new(f, "t.csv");
        while ((rc = tc_csv_next(csv, &n, &fields)) > 0)
            ;
        ck_assert_int_eq(rc, 0);
        ck_assert_uint_eq(tc_csv_bytes(csv), strlen(inputs[i]));
        tc_csv_free(csv);
        fclose(f);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("input");
    TCase *tc = tcase_create("caps");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, read_whole);
    tcase_add_test(tc, read_empty);
    tcase_add_test(tc, lines);
    tcase_add_test(tc, csv_record_cap);
    tcase_add_test(tc, csv_bytes);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
