/* HTTPS for tests: a self-signed certificate for 127.0.0.1 made with the openssl command, and
 * a one-request client that trusts it and offers every TLS version a test names. */
#ifndef TLS_H
#define TLS_H

#include <curl/curl.h>

struct tls_pair {
    char cert[300], key[300];         /* DIR/NAME.crt and DIR/NAME.key (PEM) */
    char cert_env[340], key_env[340]; /* SENDAT_API_TLS_CERT=..., SENDAT_API_TLS_KEY=... */
};

/* Writes a fresh self-signed certificate for 127.0.0.1 (a day long) and its key into dir as
 * NAME.crt and NAME.key, and fills t with their paths and the `sendat serve` settings naming
 * them. 0, or -1 if openssl failed. */
int tls_pair_make(struct tls_pair *t, const char *dir, const char *name);
/* GET https://127.0.0.1:PORT<path> trusting cert only, at the TLS versions of sslversion (a
 * CURLOPT_SSLVERSION value, e.g. CURL_SSLVERSION_TLSv1_1 | CURL_SSLVERSION_MAX_TLSv1_1), with
 * every cipher allowed (so a refused old version is the server's refusal, not the client's).
 * The curl code; *status (if not NULL) the HTTP status, *hsts (if not NULL) set to 1 if the
 * answer had Strict-Transport-Security. */
CURLcode tls_get(int port, const char *path, const char *cert, long sslversion, long *status,
                 int *hsts);

#endif
