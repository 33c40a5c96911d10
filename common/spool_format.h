/* spool_format.h - the on-disk layout of a libobserve spool file.
 *
 * One spool per process: <dir>/<client>.<pid>.<start>.spool, written only by
 * that process through a MAP_SHARED mapping, read by the slicer. A spool
 * that fills its segment (OBSERVE_SPOOL_SEGMENT_MB) rolls over into the next
 * segment, <dir>/<client>.<pid>.<start>.<NNNNNN>.spool (NNNNNN = 000001 on,
 * zero-padded): a file of its own with the same header (segment,
 * first_record set) and the OBS_SPOOL_SEALED flag set on the one before.
 * Connection numbers (conn_seq) run on across segments: an exchange record
 * may name a connection whose record is in an earlier segment.
 *
 *   [ header: OBS_SPOOL_HEADER_SIZE bytes ][ record ][ record ] ...
 *
 * Records are fixed size (OBS_RECORD_SIZE) and are *updated in place* while
 * their connection or exchange is in flight, so whatever the process has done
 * is in the page cache the moment it did it, and survives SIGKILL or _exit.
 * A record slot is reserved with an atomic counter, filled, and published by
 * storing `kind` last (release order); a slot whose kind is 0 is empty
 * (reserved but not yet published, or beyond the end of the data). The file
 * grows in large zero-filled steps, so a healthy spool ends in empty slots.
 *
 * All integers are little-endian (the writer's native order on the platforms
 * we build for); times are CLOCK_MONOTONIC nanoseconds, 0 meaning "not seen".
 * The header's (realtime_ns, monotonic_ns) pair, read together, turns them
 * into nanoseconds since the Unix epoch:
 *     epoch_ns = realtime_ns + (t - monotonic_ns)
 */
#ifndef OBSERVE_SPOOL_FORMAT_H
#define OBSERVE_SPOOL_FORMAT_H

#include <stdint.h>

#define OBS_SPOOL_MAGIC "OBSSPOOL" /* 8 bytes, no terminating NUL stored */
#define OBS_SPOOL_MAGIC_LEN 8
/* 2 adds the HTTP and info records; a version 1 file reads as one without
 * them. 3 adds the connection's application protocol and the exchange's
 * HTTP/2 stream (fields that were zero padding before: a version 2 file
 * reads as one with neither known). */
/* 4 adds segments (header: segment, first_record, segment_records; the
 * OBS_SPOOL_SEALED flag); a version 3 file reads as segment 0 of one. */
/* 5 adds the exchange's label reference (label_conn, label_seq: fields
 * that were zero padding before; a version 4 file reads as one where no
 * exchange refers to another's HTTP record). */
/* 6 adds events (OBS_REC_EVENT): a process recording with
 * OBSERVE_CAPTURE=events writes its connections' calls and protocol facts
 * as events (core/event.h) beside its connection and info records, and no
 * exchange or HTTP records; the slicer rebuilds the exchanges from them
 * (core/replay.c). */
#define OBS_SPOOL_VERSION 6u
#define OBS_SPOOL_HEADER_SIZE 4096u
#define OBS_RECORD_SIZE 128u
#define OBS_SPOOL_SUFFIX ".spool"

/* Header flags. */
#define OBS_SPOOL_ENDED 0x1u /* the process left through exit/_exit */
/* the writer went on in the next segment: no record is added to this file,
 * the ones in flight may still be updated (version 4) */
#define OBS_SPOOL_SEALED 0x2u
/* the process records events (OBSERVE_CAPTURE=events, version 6): its
 * connection records carry the connection's identity, the events its
 * times and exchanges */
#define OBS_SPOOL_EVENTS 0x4u

enum obs_record_kind {
	OBS_REC_EMPTY = 0,
	OBS_REC_CONNECTION = 1,
	OBS_REC_EXCHANGE = 2,
	OBS_REC_HTTP = 3,  /* host and path of an exchange (conn_seq, seq) */
	OBS_REC_INFO = 4,  /* more about a connection: TLS, TCP_INFO */
	OBS_REC_EVENT = 5, /* an event of the capture (version 6) */
};

/* Record state flags (obs_record.state). */
#define OBS_RS_COMPLETE 0x1u /* nothing more will be written to the record */
/* The writer's own marks in an event record: its event is final, and (a
 * record that holds two events, a call and the HTTP/1 fact after it) its
 * fact is; the record is OBS_RS_COMPLETE once all it holds is. Readers
 * look at OBS_RS_COMPLETE only. */
#define OBS_RS_EVENT_FINAL 0x2u
#define OBS_RS_FACT_FINAL 0x4u

/* How T2 was learned (obs_conn_body.t2_how). */
enum obs_t2_how {
	OBS_T2_NONE = 0,
	OBS_T2_CONNECT = 1,  /* blocking connect() returned 0 */
	OBS_T2_SO_ERROR = 2, /* getsockopt(SO_ERROR) gave 0 after EINPROGRESS */
	OBS_T2_RECONNECT = 3, /* a repeated connect() returned 0 or EISCONN */
	OBS_T2_FIRST_IO = 4,  /* the first successful send/receive */
};

/* How a connection ended (obs_conn_body.end_class). */
enum obs_end_class {
	/* still open (the reader turns it into unterminated) */
	OBS_END_NONE = 0,
	OBS_END_SERVER_CLOSE = 1,
	OBS_END_CLIENT_CLOSE = 2,
	OBS_END_RESET = 3,
	OBS_END_TIMEOUT = 4,
	OBS_END_REFUSED = 5,
	OBS_END_CONNECT_ERROR = 6,
	OBS_END_UNTERMINATED = 7,
	/* closed where the layer could not see (its fd number came back from
	 * the kernel, or a call showed it is no longer the socket): no T7 */
	OBS_END_LOST = 8,
	/* still open when the process left (exit, _exit, exec): T7 then */
	OBS_END_EXIT = 9,
};

/* Connection flags (obs_conn_body.flags). */
#define OBS_CF_NONBLOCKING 0x1u /* connect() returned EINPROGRESS */
#define OBS_CF_SHUTDOWN_WR 0x2u /* the program called shutdown(WR or RDWR) */
#define OBS_CF_INHERITED 0x4u	/* reserved: connection inherited across fork */
#define OBS_CF_TLS 0x8u		/* the first bytes sent were a TLS record */
/* a hooked TLS library showed the connection's plaintext (labels) */
#define OBS_CF_TLS_PLAIN 0x10u

/* Exchange flags (obs_exch_body.flags). */
#define OBS_XF_PEEKED 0x1u	 /* a MSG_PEEK receive delivered bytes */
#define OBS_XF_SERVER_FIRST 0x2u /* the exchange began with a receive */
/* TLS: the last, unanswered short send before close: the closing alert,
 * not a request (the reader drops the record) */
#define OBS_XF_TLS_ALERT 0x4u
#define OBS_XF_H2 0x8u	   /* an HTTP/2 stream (obs_exch_body.stream) */
#define OBS_XF_RESET 0x10u /* the stream was reset (stream_error) */

/* The application protocol of a connection (obs_conn_body.app_proto):
 * from TLS's ALPN where a TLS library is hooked, else from the first
 * bytes sent. */
enum obs_app_proto {
	OBS_AP_NONE = 0,  /* not known */
	OBS_AP_HTTP1 = 1, /* http/1.1 (HTTP/1.x requests) */
	OBS_AP_H2 = 2,	  /* h2: HTTP/2 over TLS */
	OBS_AP_H2C = 3,	  /* h2c: HTTP/2 over TCP (prior knowledge, Upgrade) */
	OBS_AP_OTHER = 4, /* another ALPN protocol */
};

struct obs_spool_header {
	char magic[OBS_SPOOL_MAGIC_LEN]; /*   0 */
	uint32_t version;		 /*   8 */
	uint32_t header_size;		 /*  12 */
	uint32_t record_size;		 /*  16 */
	uint32_t flags;			 /*  20 OBS_SPOOL_* */
	int32_t pid;			 /*  24 */
	int32_t ppid;			 /*  28 */
	int64_t realtime_ns;		 /*  32 the clock pair, read together */
	int64_t monotonic_ns;		 /*  40 */
	int64_t start_ns;	   /*  48 process (layer) start, epoch ns */
	int64_t end_mono_ns;	   /*  56 monotonic time of exit, or 0 */
	uint64_t records_reserved; /*  64 slots handed out (a hint) */
	uint64_t records_dropped;  /*  72 records lost: spool full */
	uint32_t argv_len;	   /*  80 bytes used in argv[] */
	uint32_t segment;	   /*  84 0, 1, ... (version 4) */
	char client[64];	   /*  88 NUL-terminated */
	char host[64];		   /* 152 NUL-terminated */
	char program[256];	   /* 216 NUL-terminated, full path */
	char argv[OBS_SPOOL_HEADER_SIZE - 488]; /* 472 NUL-separated */
	/* the process's record number of this segment's first record, and
	 * the record slots a segment holds (version 4; 0 before) */
	uint64_t first_record;	  /* 4080 */
	uint64_t segment_records; /* 4088 */
};

struct obs_conn_body {
	int64_t t1;    /*  16 */
	int64_t t2;    /*  24 also the time a failed connect was learned */
	int64_t teof;  /*  32 */
	int64_t t7;    /*  40 */
	int64_t tshut; /*  48 shutdown() return */
	uint8_t peer_addr[16];	/*  56 IPv4 in the first 4 bytes */
	uint8_t local_addr[16]; /*  72 */
	uint16_t family;	/*  88 AF_INET or AF_INET6 */
	uint16_t peer_port;	/*  90 host order */
	uint16_t local_port;	/*  92 host order */
	uint8_t t2_how;		/*  94 enum obs_t2_how */
	uint8_t end_class;	/*  95 enum obs_end_class */
	int32_t connect_errno;	/*  96 0 unless the connect failed */
	int32_t end_errno;	/* 100 the errno that ended it, or 0 */
	int32_t fd;		/* 104 fd at connect() */
	uint32_t exchanges;	/* 108 exchanges started so far */
	uint32_t flags;		/* 112 OBS_CF_* */
	uint8_t app_proto;	/* 116 enum obs_app_proto (version 3) */
	uint8_t pad[3];		/* 117 */
	/* the entry of a send that may begin the connection's next exchange
	 * (exchanges + 1) while that send has not returned, else 0: a send
	 * the process never came back from (killed, or ended, while it
	 * blocked) is that exchange, begun at T3 = this (version 5; zero
	 * padding before) */
	int64_t tsend_open; /* 120 */
};

struct obs_exch_body {
	uint32_t seq;	     /*  16 from 1 within the connection */
	uint32_t flags;	     /*  20 OBS_XF_* */
	int64_t t3;	     /*  24 */
	int64_t t4;	     /*  32 */
	int64_t t5;	     /*  40 */
	int64_t tfb;	     /*  48 */
	int64_t t6;	     /*  56 */
	uint64_t ds;	     /*  64 */
	uint64_t dr;	     /*  72 */
	uint32_t send_calls; /*  80 successful send-family calls */
	uint32_t recv_calls; /*  84 receive-family calls that delivered bytes */
	char method[12];     /*  88 HTTP/1.x request method, NUL-padded */
	uint16_t status;     /* 100 HTTP/1.x response status, 0 if none */
	uint8_t tls_records; /* 102 TLS: records begun in this exchange's sends
			      */
	uint8_t pad0;	     /* 103 */
	uint32_t stream;     /* 104 HTTP/2 stream id (OBS_XF_H2), version 3 */
	uint32_t stream_error; /* 108 RST_STREAM's error code (OBS_XF_RESET) */
	/* Version 5: label_seq not 0: the same HTTP/1.x request as exchange
	 * label_seq of connection label_conn, whose HTTP record (earlier in
	 * this segment) holds the host and path; this exchange has none of
	 * its own. (A client that sends the same request again writes one
	 * HTTP record, not one per request.) */
	uint64_t label_conn; /* 112 */
	uint32_t label_seq;  /* 120 */
	uint8_t pad[4];	     /* 124 */
};

/* Host and path of an HTTP request (HTTP/1.x, or an HTTP/2 stream's
 * :authority and :path), never the query string. */
#define OBS_HF_HOST_CUT 0x1u /* host longer than the field: cut */
#define OBS_HF_PATH_CUT 0x2u /* path longer than the field: cut */
struct obs_http_body {
	uint32_t seq;	/*  16 the exchange's number */
	uint32_t flags; /*  20 OBS_HF_* */
	char host[40];	/*  24 NUL-padded (no terminator when full) */
	char path[64];	/*  64 NUL-padded (no terminator when full) */
};

/* More about a connection, written when first known. */
#define OBS_IF_TLS 0x1u	    /* tls_* are set */
#define OBS_IF_TCPINFO 0x2u /* the tcp_* fields are set (at close) */
/* dns_start/dns_end: the lookup this connect was the first to use */
#define OBS_IF_DNS 0x4u
struct obs_info_body {
	int64_t tls_start;	/*  16 entry of the first handshake send */
	int64_t tls_end;	/*  24 return of the last handshake receive */
	uint32_t flags;		/*  32 OBS_IF_* */
	uint16_t tls_version;	/*  36 from the record header: 0x0301.. */
	uint16_t pad0;		/*  38 */
	uint32_t rtt_us;	/*  40 TCP_INFO tcpi_rtt */
	uint32_t rttvar_us;	/*  44 tcpi_rttvar */
	uint32_t min_rtt_us;	/*  48 tcpi_min_rtt */
	uint32_t retrans;	/*  52 tcpi_total_retrans */
	uint32_t snd_cwnd;	/*  56 tcpi_snd_cwnd (segments) */
	uint32_t pmtu;		/*  60 tcpi_pmtu */
	uint64_t delivery_rate; /* 64 tcpi_delivery_rate (bytes/s) */
	int64_t dns_start;	/*  72 getaddrinfo() entry */
	int64_t dns_end;	/*  80 getaddrinfo() return */
	char dns_name[40];	/*  88 the name looked up (NUL-padded, cut) */
};

/* An event (core/event.h's struct obs_event, as core/evrec.c encodes it):
 * the event's part (16..79), and an HTTP/1 fact's part (80..127). An
 * HTTP/1 fact is an event of its own (ev_kind OBS_EV_H1), or rides in the
 * record of the call event just before it (ev_kind OBS_EV_CALL, fact not
 * 0): then it is the event numbered seq + 1, of the call's direction, and
 * the record holds two events. Events of one connection are in the order
 * the capture wrote them; a record whose event (or either of its two) may
 * still change (the last call event while calls merge into it, an HTTP/1
 * message's fact until the message ends) lacks OBS_RS_COMPLETE until
 * both are final. */
struct obs_event_body {
	uint8_t ev_kind;      /*  16 enum obs_ev_kind; OBS_EV_LABELS */
	uint8_t dir;	      /*  17 */
	uint8_t aux;	      /*  18 */
	uint8_t flags;	      /*  19 OBS_EVF_* */
	int32_t err;	      /*  20 */
	uint32_t calls;	      /*  24 */
	uint32_t first_bytes; /*  28 */
	int64_t t_in;	      /*  32 */
	int64_t t_data;	      /*  40 */
	int64_t t_out;	      /*  48 */
	uint64_t offset;      /*  56 */
	uint64_t bytes;	      /*  64 calls: bytes; WebSocket: the message's
			       * size */
	uint64_t seq;	      /*  72 the event's number in its connection */
	/* the HTTP/1 fact's part */
	uint64_t begin;	 /*  80 the message's first byte */
	uint64_t end;	 /*  88 one past its last byte (ended) */
	uint64_t at;	 /*  96 where the fact stands */
	uint16_t status; /* 104 */
	uint8_t fact;	 /* 106 HTTP/1: the fact's kind (0: none rides in a
			  * call's record); WebSocket: the opcode; proto:
			  * the level */
	uint8_t reason;	 /* 107 */
	uint8_t ended;	 /* 108 */
	uint8_t body;	 /* 109 */
	uint8_t sw;	 /* 110 */
	uint8_t labels;	 /* 111 1: the next record holds its host and path
			  * (an OBS_EV_LABELS event) */
	uint32_t hflags; /* 112 */
	char method[12]; /* 116 */
};

/* The host and path of the request whose fact is the record before it
 * (ev_kind OBS_EV_LABELS), NUL-padded, full when cut. */
struct obs_labels_body {
	uint8_t ev_kind; /* 16 */
	uint8_t pad[7];	 /* 17 */
	char host[40];	 /* 24 */
	char path[64];	 /* 64 */
};

struct obs_record {
	uint32_t kind;	   /* 0 enum obs_record_kind; published last */
	uint32_t state;	   /* 4 OBS_RS_* */
	uint64_t conn_seq; /* 8 connection number within the process, from 1 */
	union {
		struct obs_conn_body conn;
		struct obs_exch_body exch;
		struct obs_http_body http;
		struct obs_info_body info;
		struct obs_event_body event;
		struct obs_labels_body labels;
	} u;
};

_Static_assert(sizeof(struct obs_spool_header) == OBS_SPOOL_HEADER_SIZE,
	       "spool header size");
_Static_assert(sizeof(struct obs_record) == OBS_RECORD_SIZE, "record size");

#endif
