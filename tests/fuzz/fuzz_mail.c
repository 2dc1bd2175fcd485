/* Mail addresses and header values: each line goes through the address check, the recipient
 * and header setters, and the folding RFC 2047 and address-list builders the SMTP sender uses. */
#include "fuzz.h"
#include "mailhdr.h"
#include "task.h"

/* A built field may break lines only to fold them: every CR LF is followed by a space, and
 * no CR or LF stands alone (that would start a header of the input's choosing). */
static void
check_folded(char *field)
{
    for (char *p = field; p && *p; p++)
        if ((*p == '\r' && (p[1] != '\n' || (p[2] != ' ' && p[2] != '\t'))) ||
            (*p == '\n' && (p == field || p[-1] != '\r')))
            abort();
    free(field);
}

static void
one_line(struct sa_task *t, const char *line)
{
    char name[1024], addr[SA_ADDRESS_MAX + 1], *field = NULL;
    char *const list[] = {(char *)line};

    if (sa_address_parse(line, name, sizeof(name), addr, sizeof(addr), NULL) == SA_OK &&
        (strlen(addr) > SA_ADDRESS_MAX || strpbrk(addr, "\r\n") || strpbrk(name, "\r\n")))
        abort(); /* an accepted address never carries a line break into a header */
    (void)!sa_task_add_rcpt(t, SA_RCPT_TO, line, NULL);
    (void)!sa_task_add_header_line(t, line, NULL);
    (void)!sa_task_set_email(t, SA_EMAIL_SUBJECT, line, NULL);
    if (sa_mailhdr_text(&field, "Subject", line, NULL) == SA_OK)
        check_folded(field);
    field = NULL;
    if (sa_mailhdr_addresses(&field, "To", list, 1, NULL) == SA_OK)
        check_folded(field);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size), *lines[16];
    struct sa_task *t = NULL;
    int n = fuzz_lines(text, lines, 16);

    if (sa_task_new(&t, NULL) != SA_OK)
        abort();
    for (int i = 0; i < n; i++)
        one_line(t, lines[i]);
    t->channel = SA_CHANNEL_EMAIL;
    (void)!sa_task_validate_email(t, NULL);
    sa_task_free(t);
    free(text);
    return 0;
}
