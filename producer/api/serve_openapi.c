/* GET /v1/openapi.json: docs/openapi.yaml as JSON (producer/openapi.json, compiled in). It is
 * the one route that needs no token: it says what the API is, nothing about what it holds. */
#include <string.h>

#include "serve.h"

extern const char serve_openapi_json[];
extern const size_t serve_openapi_json_len;

int
serve_is_public(const struct request *r)
{
    return !strcmp(r->method, "GET") && r->n_parts == 1 && !strcmp(r->parts[0], "openapi.json");
}

void
serve_openapi(struct request *r)
{
    json_error_t jerr;
    json_t *doc = json_loadb(serve_openapi_json, serve_openapi_json_len, 0, &jerr);

    if (doc)
        serve_reply(r, 200, doc);
    else
        serve_fail(r, 500, NULL, "the built-in OpenAPI document does not parse: %s", jerr.text);
}
