/* The web console: console/ (HTML, CSS, JavaScript) compiled in and served by `sendat serve`
 * outside /v1 with no token. The files hold no data: the page asks /v1 for everything with the
 * bearer token the user typed, so serving them needs no role. */
#include <string.h>

#include <microhttpd.h>

#include "serve.h"

struct console_file {
    const char *path;
    const char *type;
    const char *bytes;
    const size_t *len;
};

extern const char console_index_html[], console_console_css[], console_console_js[];
extern const size_t console_index_html_len, console_console_css_len, console_console_js_len;

static const struct console_file files[] = {
    {"/", "text/html; charset=utf-8", console_index_html, &console_index_html_len},
    {"/console/console.css", "text/css; charset=utf-8", console_console_css,
     &console_console_css_len},
    {"/console/console.js", "text/javascript; charset=utf-8", console_console_js,
     &console_console_js_len},
};

int
serve_console_find(const char *method, const char *url)
{
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return -1;
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        if (!strcmp(url, files[i].path))
            return (int)i;
    return -1;
}

int
serve_console_send(void *conn, int file, int hsts)
{
    const struct console_file *f = &files[file];
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(*f->len, (void *)f->bytes, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ok;

    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", f->type);
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    MHD_add_response_header(resp, "Content-Security-Policy",
                            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; "
                            "base-uri 'none'; form-action 'self'");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    if (hsts)
        MHD_add_response_header(resp, "Strict-Transport-Security", SERVE_HSTS);
    ok = MHD_queue_response(conn, MHD_HTTP_OK, resp);
    MHD_destroy_response(resp);
    return ok;
}
