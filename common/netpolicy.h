/* Which addresses a webhook may go to: SENDAT_WEBHOOK_ALLOW and SENDAT_WEBHOOK_DENY (CIDR
 * lists, the word `private`) over a built-in deny list of link-local, metadata, 0.0.0.0/8,
 * multicast, broadcast, reserved and documentation addresses (after the IANA special-purpose
 * registries). An IPv6 address that carries an IPv4 one (NAT64 64:ff9b::/96, 6to4 2002::/16,
 * ::/96, ::ffff:0:0/96) is also judged as that IPv4 address. The consumer judges every
 * resolved address before it connects; the producer judges the literal addresses it can see
 * in a URL. */
#ifndef SA_NETPOLICY_H
#define SA_NETPOLICY_H

#include <sys/socket.h>

#include "sa_err.h"

/* Most entries one list may hold (the word `private` counts as 11). */
#define SA_NETPOLICY_MAX 1024

/* What a refused send's reason says: the same words for every address, so a dead letter or
 * a claim never tells a producer what sits behind the consumers. */
#define SA_NETPOLICY_REFUSED "destination refused by the webhook address policy"

struct sa_netpolicy;

/* Builds a policy from the ALLOW and DENY lists (either may be NULL or empty): entries
 * separated by commas or white space, each `private`, an address or address/bits, IPv4 or
 * IPv6. An address in ALLOW is allowed; otherwise one in DENY or the built-in list is
 * refused; anything else is allowed. SA_EINVAL names the variable and the entry that does
 * not parse; SA_ENOMEM. *out is freed with sa_netpolicy_free. */
enum sa_code sa_netpolicy_new(struct sa_netpolicy **out, const char *allow, const char *deny,
                              struct sa_err *err) SA_MUST_CHECK;
void sa_netpolicy_free(struct sa_netpolicy *p);

/* 1 if a connection to addr (AF_INET or AF_INET6; an IPv4-mapped IPv6 address is judged as
 * its IPv4 address) is allowed, 0 if refused. Any other family is refused. */
int sa_netpolicy_allows(const struct sa_netpolicy *p, const struct sockaddr *addr);

/* SA_EINVAL if url's host is a literal address (in any form curl accepts: 2130706433,
 * 0x7f000001, 127.1, [::ffff:127.0.0.1]) that p refuses; SA_OK for a name or an allowed
 * address (names are judged where they resolve, at connect time). */
enum sa_code sa_netpolicy_check_url(const struct sa_netpolicy *p, const char *url,
                                    struct sa_err *err) SA_MUST_CHECK;

#endif
