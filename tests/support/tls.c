/* HTTPS for tests: the certificate comes from the openssl command (as an operator would make
 * one), and the client lets every cipher be tried so that what a test sees refused was
 * refused by the server under test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tls.h"

int
tls_pair_make(struct tls_pair *t, const char *dir, const char *name)
{
    char cmd[1024];

    snprintf(t->cert, sizeof(t->cert), "%s/%s.crt", dir, name);
    snprintf(t->key, sizeof(t->key), "%s/%s.key", dir, name);
    snprintf(cmd, sizeof(cmd),
             "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
             "-addext subjectAltName=IP:127.0.0.1 -keyout %s -out %s >/dev/null 2>&1",
             t->key, t->cert);
    snprintf(t->cert_env, sizeof(t->cert_env), "SENDAT_API_TLS_CERT=%s", t->cert);
    snprintf(t->key_env, sizeof(t->key_env), "SENDAT_API_TLS_KEY=%s", t->key);
    return system(cmd) == 0 ? 0 : -1;
}

static size_t
find_hsts(char *line, size_t size, size_t n, void *arg)
{
    if (arg && !strncasecmp(line, "Strict-Transport-Security: max-age=", 35))
        *(int *)arg = 1;
    return size * n;
}

CURLcode
tls_get(int port, const char *path, const char *cert, long sslversion, long *status, int *hsts)
{
    char url[256];
    CURL *c = curl_easy_init();
    FILE *sink = fopen("/dev/null", "w");
    CURLcode cc;

    snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", port, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CAINFO, cert);
    curl_easy_setopt(c, CURLOPT_SSLVERSION, sslversion);
    curl_easy_setopt(c, CURLOPT_SSL_CIPHER_LIST, "DEFAULT:@SECLEVEL=0"); /* let 1.1 be tried */
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, find_hsts);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, hsts);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, sink);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    cc = curl_easy_perform(c);
    if (status)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    curl_easy_cleanup(c);
    fclose(sink);
    return cc;
}
