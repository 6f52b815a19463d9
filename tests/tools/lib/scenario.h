/*
 * scenario.h - an etlgen scenario (docs/scenario-format.md) read from YAML
 * into a model: the machine, processes with threads and images, stacks,
 * and the events to write, each a struct gev in time order once sorted.
 * tests/tools/lib/generate.c adds the generated events and
 * tests/tools/lib/scenwrite.c writes the model as an .etl; etlgen calls
 * the three.  One scenario per process: the model is the global scen.
 */
#ifndef ETLKIT_SCENARIO_H
#define ETLKIT_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include <yaml.h>

#define SCEN_NONE INT64_MIN		/* "no time": the object is in the rundown */

/*
 * ReadyThread: a[0] the readying thread (SCEN_WAKER_RUNNING until
 * scen_resolve_wakers sets it to the thread running on the CPU), a[5]
 * the header kind (SCEN_HDR_*) | SCEN_WAKER_UNKNOWN when no CSwitch
 * before it says who runs there, so a decoder cannot know the waker.
 */
#define SCEN_WAKER_RUNNING 0xFFFFFFFFu
#define SCEN_HDR_PERFINFO 0		/* as real traces: no thread id in the header */
#define SCEN_HDR_FULL     1		/* full SYSTEM header naming the readying thread */
#define SCEN_HDR_COMPACT  2		/* compact SYSTEM header naming it */
#define SCEN_WAKER_UNKNOWN 0x100u

enum kind {
	K_SAMPLE, K_DPC, K_TDPC, K_TIMERDPC, K_ISR, K_CSWITCH, K_READY,
	K_PSTART, K_PEND, K_PDCSTART, K_PDCEND,
	K_TSTART, K_TEND, K_TDCSTART, K_TDCEND,
	K_ILOAD, K_IUNLOAD, K_IDCSTART, K_IDCEND,
	K_LOST, K_INTERVAL, K_STACKWALK, K_IMAGEID, K_DBGID,
	/* disk and file I/O (explicit events only; struct gio in gev.obj) */
	K_DISKREAD, K_DISKWRITE, K_DISKREADINIT, K_DISKWRITEINIT, K_HARDFAULT,
	K_FILEIONAME, K_FILEIORUNDOWN, K_FILEIOCREATE, K_FILEIOREAD, K_FILEIOWRITE,
	K_FILEIOCLOSE, K_FILEIOOPEND,
	/* TcpIp (group 6) and UdpIp (group 8), IPv4 then IPv6 (struct gnet in gev.obj) */
	K_TCPSEND, K_TCPRECV, K_TCPCONNECT, K_TCPDISCONNECT, K_TCPRETRANSMIT, K_TCPACCEPT,
	K_TCPRECONNECT, K_TCPCOPY,
	K_TCPSEND6, K_TCPRECV6, K_TCPCONNECT6, K_TCPDISCONNECT6, K_TCPRETRANSMIT6, K_TCPACCEPT6,
	K_TCPRECONNECT6, K_TCPCOPY6,
	K_UDPSEND, K_UDPRECV, K_UDPSEND6, K_UDPRECV6,
	NKINDS
};

/* Event kind names as the evt format prints them; wait reasons and thread states by number. */
extern const char *const scen_kind_names[NKINDS];
extern const char *const scen_wait_reasons[];
extern const char *const scen_thread_states[];

/* ---------- the scenario model ---------- */

struct proc;

struct image {
	char *path, *name;
	uint64_t base, size;
	uint32_t checksum, timestamp, image_timestamp;
	char *original;			/* ImageID OriginalFileName */
	char *pdb;
	uint8_t guid[16];
	char guidtext[40];
	uint32_t age;
	int64_t load, unload;		/* ticks from the header event or SCEN_NONE */
	struct proc *proc;
};

struct thread {
	uint32_t tid;
	struct proc *proc;
	uint64_t start_addr;
	char *name;
	int prio;
	int64_t start, end;
	int no_rundown;			/* no DCStart: a decoder first meets it in an event */
	int idle_cpu;			/* the idle thread of this CPU, or -1 */
	int reused;			/* one of several lives of its tid (each with start and end) */
};

struct proc {
	char *name, *cmdline;
	uint32_t pid, parent, session, exit;
	int64_t start, end;
	uint64_t key;			/* UniqueProcessKey (EPROCESS) */
	struct image *img;
	int nimg;
	struct thread **thr;
	int nthr;
};

struct rstack {
	int n, nk;			/* frames, of which kernel frames (leaf side) */
	uint64_t *addr;			/* root first */
	char *text;			/* the evt stack column */
	uint64_t kkey, ukey;		/* stack keys, 0 = not assigned */
	int kslot, uslot;		/* with a key cache: the slot holding it, or -1 */
};

struct gev {
	int64_t t;			/* header timestamp (ticks from the header event) */
	int64_t t0;			/* DPC/ISR: InitialTime */
	uint32_t seq;
	int16_t cpu;
	uint8_t kind;
	uint8_t gen;			/* made by a generator (may be moved) */
	uint32_t a[6];
	uint64_t addr;
	void *obj;
	struct rstack *stack;
};

/* A disk or file I/O event's fields (scenario.c parse_io_event, scenwrite.c write_io). */
struct gio {
	uint32_t tid;			/* the issuing thread (0: none) */
	uint32_t disk, bytes, status, version;
	uint64_t irp, file_object, file_key, offset, va;
	int64_t elapsed;		/* ticks */
	const char *file;		/* in the YAML document */
};

/* Is KIND one of the disk and file I/O kinds? */
int scen_is_io(int kind);

/*
 * A TcpIp or UdpIp event's fields (scenario.c parse_net_event, scenwrite.c
 * write_net): addresses in network byte order, as the payload holds them,
 * and as the scenario wrote them (the --expect text is etl2evt's form).
 */
struct gnet {
	uint32_t pid, bytes;
	uint16_t dport, sport;
	int v6;				/* 16-byte addresses (the IPV6 kinds) */
	int cut;			/* payload_bytes: keep only this many (a damaged record), or -1 */
	uint8_t daddr[16], saddr[16];
};

/* Is KIND one of the TcpIp/UdpIp kinds?  Its kernel group and event type. */
int scen_is_net(int kind);
void scen_net_id(int kind, int *group, int *type);

struct scenario {
	/* machine (etlgen's options set some before scen_load, which keeps them) */
	int cpus, psize;
	uint8_t version[4];
	uint32_t os_build, cpu_mhz;
	uint64_t freq, start_qpc, start_ft, boot_ft;
	int64_t duration;		/* ticks */
	double interval_ms;
	uint32_t buffer_size;
	int compress;
	int stack_mode;			/* 0 full, 1 keys, 2 split user part */
	uint64_t seed;
	uint32_t events_lost, buffers_lost;
	uint32_t rundown_pid, rundown_tid, rundown_end_tid;
	int key_cache;			/* stack key cache entries, 0 = no eviction */
	double user_delay_ms;		/* split/keys: the user part of a kernel-mode sample comes this late */
	int64_t repeat;			/* --repeat: copies of the trace body */
	char *logger_name;
	/* model */
	struct proc *procs;
	int nproc;
	struct thread *thr;
	int nthr;
	struct rstack **stacks;
	int nstacks;
	struct gev *ev;
	size_t nev, capev;
	uint32_t lost_total, lost_buffers;
	int64_t last_t;			/* the last event written (scenwrite_trace) */
	yaml_document_t doc;
	const char *file;
};

extern struct scenario scen;

/*
 * Reads the scenario PATH: the machine (options already set in scen win),
 * the processes, and with SYMBOLS (a map from build-symbols.sh, or NULL)
 * the functions that routines are placed in.  Exits 2 on any error.
 */
void scen_load(const char *path, const char *symbols);
/* The explicit events (events:). */
void scen_parse_events(void);
/* --emit-c: DIR/MODULE.c with stand-in functions for the named routines, DIR/modules.txt. */
void scen_emit_sources(const char *dir);
void scen_free(void);

/* The top-level mapping KEY ("generate", ...) or NULL. */
yaml_node_t *scen_section(const char *key);

/* YAML access: each failure exits with FILE:LINE (scen_bad). */
void scen_bad(const yaml_node_t *n, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));
yaml_node_t *scen_get(const yaml_node_t *map, const char *key);
void scen_check_keys(const yaml_node_t *map, const char *const *ok);
const char *scen_scalar(const yaml_node_t *n);
uint64_t scen_u64_or(const yaml_node_t *map, const char *key, uint64_t dflt);
double scen_num_of(const yaml_node_t *n);
double scen_num_or(const yaml_node_t *map, const char *key, double dflt);
int scen_bool_or(const yaml_node_t *map, const char *key, int dflt);
int64_t scen_ms_to_ticks(double ms);
int64_t scen_time_or(const yaml_node_t *map, const char *key, int64_t dflt);
int scen_seq_len(const yaml_node_t *n);
yaml_node_t *scen_seq_at(const yaml_node_t *n, int i);
int scen_kind_of(const yaml_node_t *n);
int scen_cpu_of(const yaml_node_t *n);
uint32_t scen_tid_of(const yaml_node_t *n);
/* The same where one life is meant (generators, timelines): exits 2 if the tid is reused. */
uint32_t scen_tid_one_life_of(const yaml_node_t *n);
/* A KWAIT_REASON name (Executive ... WrDeferredPreempt) or number. */
int scen_wait_reason_of(const yaml_node_t *n);

/* The model */
/* The scenario's process PID, or NULL. */
struct proc *scen_proc_by_pid(uint32_t pid);
/* Thread TID (its first life if the tid is reused), or NULL. */
struct thread *scen_thread(uint32_t tid);
/*
 * Thread TID at time T: a reused tid's life whose [start, end] holds T, or
 * NULL if none does; any other tid's one thread whatever T is.
 */
struct thread *scen_thread_at(uint32_t tid, int64_t t);
int scen_is_kernel_addr(uint64_t a);
/* The image holding address A as seen from process PID (kernel images are global). */
struct image *scen_resolve(uint32_t pid, uint64_t a);
/* A frame as the evt stack column prints it: MODULE!NAME, MODULE!0xRVA or ?!? */
void scen_frame_text(char *out, size_t cap, uint32_t pid, uint64_t a);
uint64_t scen_frame_addr(const yaml_node_t *n, uint32_t pid);
struct rstack *scen_make_stack(const yaml_node_t *n, uint32_t pid);
/* A new event (zeroed but for kind, cpu, t and its sequence number). */
struct gev *scen_add_event(int kind, int cpu, int64_t t);
int scen_is_dpc(int kind);
/* SCEN_HDR_* of a ReadyThread "header:" value N (NULL: the default, PERFINFO). */
uint32_t scen_ready_header(const yaml_node_t *n);
/*
 * With the events sorted: every ReadyThread's readying thread is the one
 * running on its CPU (the last CSwitch there), as Windows logs it.  A
 * readying thread given in the scenario must agree; exits 2 if not.
 */
void scen_resolve_wakers(void);

/* The seeded random stream (scen.seed): uniform in [0, 1), standard normal. */
double scen_rng_unit(void);
double scen_rng_gauss(void);

#endif
