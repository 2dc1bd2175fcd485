/* Mail header fields, folded per RFC 5322: address lists at their commas, text at its spaces,
 * and non-ASCII text as RFC 2047 encoded-words (UTF-8, base64). Shared so that the producer
 * refuses, by the same code, a field the consumer could not build. */
#ifndef SA_MAILHDR_H
#define SA_MAILHDR_H

#include <stddef.h>
#include <stdint.h>

#include "sa_err.h"

/* One folded header field at most, name and folds included: below Postfix's
 * header_size_limit (102400), which cuts longer fields. */
#define SA_MAILHDR_MAX 65536
#define SA_ADDRESS_MAX 254

/* Checks an email address, bare or "Display Name <addr>"; on SA_OK writes the bare address
 * into addr (cap >= SA_ADDRESS_MAX + 1) and the display name (may be empty) into name. */
enum sa_code sa_address_parse(const char *text, char *name, size_t name_cap, char *addr,
                              size_t addr_cap, struct sa_err *err) SA_MUST_CHECK;

/* "Name: a@b.example,\r\n Who <c@d.example>" from n addresses, each bare or "Name <addr>";
 * every line at most 78 characters where a token allows, never over 998. *out is malloc'd
 * (no final CRLF). SA_EINVAL if an entry is not an address or the field would be longer
 * than SA_MAILHDR_MAX (the message names the field, never a value); SA_ENOMEM. */
enum sa_code sa_mailhdr_addresses(char **out, const char *name, char *const *list, size_t n,
                                  struct sa_err *err) SA_MUST_CHECK;

/* "Name: text" for unstructured text (Subject): as is when it is printable ASCII (folded at
 * its spaces), else as =?UTF-8?B?...?= words cut at character boundaries. Like
 * sa_mailhdr_addresses for *out and the codes; text that is not
 * sa_mailhdr_value_ok is SA_EINVAL. */
enum sa_code sa_mailhdr_text(char **out, const char *name, const char *text,
                             struct sa_err *err) SA_MUST_CHECK;

/* 1 if v is visible ASCII, space and tab, or well-formed UTF-8 without control characters
 * (C0 but TAB, DEL, C1); else 0. What a header value (webhook headers, Subject) may hold:
 * such bytes are refused, never sent. */
int sa_mailhdr_value_ok(const char *v);

/* "Sun, 22 Nov 2026 09:35:00 +0000". */
int sa_mailhdr_date(char *out, size_t cap, int64_t ms);

#endif
