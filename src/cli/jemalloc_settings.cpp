// jemalloc's options for the carrier binary, read when it initialises (its `malloc_conf`);
// MALLOC_CONF in the environment still overrides them.
//
// Without a background thread jemalloc gives freed pages back only while the program keeps
// allocating, so an idle broker kept what a storm of departed clients had used for good
// (10,000 MQTT subscribers gone: 245 MB resident until the next burst). One purging thread
// returns it after the usual decay (10 s) whatever the shards are doing.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "background_thread:true,max_background_threads:1";
}
