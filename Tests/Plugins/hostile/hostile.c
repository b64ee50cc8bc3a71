// A test plugin that behaves badly in ways jobrunner must contain (issue 26, items 10 and 11):
// `hostile.loud` writes 12 MiB to each of its standard output and error; `hostile.stdout`
// prints a line on its standard output; `hostile.longmessage` fails with a 100 KB message;
// `hostile.bigoutputs` succeeds with 2 MiB of outputs; `hostile.ok` behaves. The parameter
// check crashes (SIGSEGV) when the parameters mention "segv", never returns for "loop" and
// calls exit(0) for "exit". With HOSTILE_BANNER=1, a constructor prints a line on standard
// output.
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jobrunner_plugin.h"

__attribute__((constructor)) static void banner(void) {
    const char *wanted = getenv("HOSTILE_BANNER");
    if (wanted && strcmp(wanted, "1") == 0) {
        const char line[] = "hostile: a banner from a constructor\n";
        (void)!write(1, line, sizeof line - 1);
    }
}

static char *copy(const char *text, size_t *length) {
    *length = strlen(text);
    char *buffer = malloc(*length + 1);
    if (buffer) memcpy(buffer, text, *length + 1);
    return buffer;
}

static void flood(int fd, size_t bytes) {
    char chunk[65536];
    memset(chunk, 'y', sizeof chunk);
    for (size_t i = 0; i + 1 < sizeof chunk; i += 64) chunk[i + 63] = '\n';
    for (size_t done = 0; done < bytes; done += sizeof chunk) {
        if (write(fd, chunk, sizeof chunk) < 0) return;
    }
}

static char *invoke(void *context, const char *handler, const char *request, size_t request_length,
                    size_t *response_length) {
    (void)context, (void)request, (void)request_length;
    if (strcmp(handler, "loud") == 0) {
        flood(1, (size_t)12 << 20);
        flood(2, (size_t)12 << 20);
    } else if (strcmp(handler, "stdout") == 0) {
        const char line[] = "hostile: a line on standard output\n";
        (void)!write(1, line, sizeof line - 1);
    } else if (strcmp(handler, "longmessage") == 0) {
        size_t length = 100000;
        const char head[] = "{\"status\":\"failed\",\"message\":\"";
        const char tail[] = "\"}";
        char *response = malloc(sizeof head + length + sizeof tail);
        if (!response) return copy("{\"status\":\"failed\"}", response_length);
        memcpy(response, head, sizeof head - 1);
        memset(response + sizeof head - 1, 'm', length);
        memcpy(response + sizeof head - 1 + length, tail, sizeof tail);
        *response_length = sizeof head - 1 + length + sizeof tail - 1;
        return response;
    } else if (strcmp(handler, "bigoutputs") == 0) {
        size_t length = (size_t)2 << 20;
        const char head[] = "{\"status\":\"succeeded\",\"outputs\":{\"big\":\"";
        const char tail[] = "\"}}";
        char *response = malloc(sizeof head + length + sizeof tail);
        if (!response) return copy("{\"status\":\"failed\"}", response_length);
        memcpy(response, head, sizeof head - 1);
        memset(response + sizeof head - 1, 'o', length);
        memcpy(response + sizeof head - 1 + length, tail, sizeof tail);
        *response_length = sizeof head - 1 + length + sizeof tail - 1;
        return response;
    }
    return copy("{\"status\":\"succeeded\"}", response_length);
}

static int mentions(const char *parameters, size_t length, const char *word) {
    size_t size = strlen(word);
    for (size_t i = 0; i + size <= length; i++) {
        if (memcmp(parameters + i, word, size) == 0) return 1;
    }
    return 0;
}

static char *check_parameters(void *context, const char *handler, const char *parameters,
                              size_t parameters_length) {
    (void)context, (void)handler;
    if (mentions(parameters, parameters_length, "segv")) raise(SIGSEGV);
    if (mentions(parameters, parameters_length, "loop")) {
        for (;;) pause();
    }
    if (mentions(parameters, parameters_length, "exit")) exit(0);
    if (mentions(parameters, parameters_length, "refuse")) {
        size_t length;
        return copy("refused by hostile", &length);
    }
    return NULL;
}

static void free_response(void *context, char *response) {
    (void)context;
    free(response);
}

static const char *const handlers[] = {"ok", "loud", "stdout", "longmessage", "bigoutputs"};

static const jobrunner_plugin_descriptor descriptor = {
    .abi_version = JOBRUNNER_PLUGIN_ABI_VERSION,
    .name = "hostile",
    .version = "1.0.0",
    .handler_count = 5,
    .handlers = handlers,
    .invoke = invoke,
    .check_parameters = check_parameters,
    .free_response = free_response,
};

__attribute__((visibility("default"))) const jobrunner_plugin_descriptor *jobrunner_plugin_v1(void) {
    return &descriptor;
}
