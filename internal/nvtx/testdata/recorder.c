/* A minimal NVTX injection library for the tests: it takes the core module's table through
 * the v3 injection protocol, fills the slots of the calls gpuactor makes, and appends one line
 * per call to the file named by NVTX_RECORD_FILE. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>

typedef void (*fnptr)(void);
typedef const void *(*get_export_table_t)(uint32_t);
typedef struct {
	size_t size;
	int (*get_module_function_table)(int module, fnptr ***table, unsigned int *size);
} callbacks_t;

static FILE *out;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_id = 100;

static void logf_(const char *kind, const char *s) {
	pthread_mutex_lock(&mu);
	fprintf(out, "%s %s\n", kind, s ? s : "");
	fflush(out);
	pthread_mutex_unlock(&mu);
}

static int push(const char *s) { logf_("push", s); return 0; }
static int pop(void) { logf_("pop", ""); return 0; }
static void mark(const char *s) { logf_("mark", s); }
static uint64_t start(const char *s) { logf_("start", s); return __atomic_add_fetch(&next_id, 1, __ATOMIC_SEQ_CST); }
static void end(uint64_t id) { char b[32]; snprintf(b, sizeof b, "%llu", (unsigned long long)id); logf_("end", b); }
static void name_thread(uint32_t tid, const char *s) { (void)tid; logf_("thread", s); }

int InitializeInjectionNvtx2(get_export_table_t get) {
	const char *path = getenv("NVTX_RECORD_FILE");
	if (!path || !(out = fopen(path, "a"))) return 0;
	const callbacks_t *cb = get(1);
	if (!cb || cb->size < sizeof(callbacks_t)) return 0;
	fnptr **table = 0;
	unsigned int n = 0;
	if (!cb->get_module_function_table(1, &table, &n) || n < 16) return 0;
	*table[2] = (fnptr)mark;
	*table[5] = (fnptr)start;
	*table[7] = (fnptr)end;
	*table[9] = (fnptr)push;
	*table[11] = (fnptr)pop;
	*table[14] = (fnptr)name_thread;
	logf_("init", "");
	return 1;
}
