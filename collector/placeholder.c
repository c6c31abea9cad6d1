/* STUB: the collector, to be implemented. */
typedef int tc_stub_collector_t;
