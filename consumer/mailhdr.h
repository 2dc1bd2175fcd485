/* Mail header values for non-ASCII text: RFC 2047 encoded-words (UTF-8, base64) for Subject
 * and display names, RFC 5322 dates, and address lists. */
#ifndef MAILHDR_H
#define MAILHDR_H

#include <stddef.h>
#include <stdint.h>

/* Writes text as is when it is printable ASCII, else as =?UTF-8?B?...?= words of 64
 * characters at most, split on character boundaries and folded one word a line ("\r\n "
 * between words). Returns the length, -1 if cap is short. */
int mailhdr_encode(char *out, size_t cap, const char *text);

/* "Name <addr>" or "addr" -> a header-ready mailbox (name encoded or quoted as needed). */
int mailhdr_mailbox(char *out, size_t cap, const char *text);

/* "Sun, 22 Nov 2026 09:35:00 +0000". */
int mailhdr_date(char *out, size_t cap, int64_t ms);

#endif
