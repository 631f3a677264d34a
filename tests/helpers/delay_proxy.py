"""Added latency without netem: a TCP relay that holds every chunk it reads for `delay_ms` before
writing it on, in both directions, keeping the order. A kernel without sch_netem has no `tc
netem delay`; this gives a link the same one-way delay (a little more: the relay's own hop),
though not netem's jitter or reordering. The relay runs its own asyncio loop in a thread, inside
a network namespace if given (a socket belongs to the namespace of the thread that made it), and
listens on that namespace's loopback: the dialling node connects to it there."""

import asyncio
import threading

from helpers import netns


class DelayProxy:
    def __init__(self, target_host, target_port, delay_ms, ns=None):
        self.target = (target_host, target_port)
        self.delay = delay_ms / 1000.0
        self.ns = ns
        self.port = None
        self.connections = 0
        self._loop = None
        self._server = None
        self._writers = set()
        self._ready = threading.Event()
        self._error = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise AssertionError("the delay proxy did not start within 10 s")
        if self._error:
            raise self._error

    def _run(self):
        try:
            if self.ns:
                netns.enter(self.ns)
            self._loop = asyncio.new_event_loop()
            self._server = self._loop.run_until_complete(asyncio.start_server(self._accept, "127.0.0.1", 0))
            self.port = self._server.sockets[0].getsockname()[1]
        except BaseException as e:  # handed to the constructor
            self._error = e
            self._ready.set()
            return
        self._ready.set()
        self._loop.run_forever()
        self._loop.close()

    async def _accept(self, client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(*self.target)
        except OSError:
            client_writer.close()
            return
        self.connections += 1
        self._writers.update((client_writer, server_writer))
        await asyncio.gather(self._pipe(client_reader, server_writer), self._pipe(server_reader, client_writer),
                             return_exceptions=True)
        for w in (client_writer, server_writer):
            self._writers.discard(w)
            w.close()

    async def _pipe(self, reader, writer):
        """Each chunk leaves `delay` after it arrived; one side closing closes the other."""
        held = asyncio.Queue()

        async def read():
            try:
                while data := await reader.read(65536):
                    held.put_nowait((self._loop.time() + self.delay, data))
            finally:
                held.put_nowait((self._loop.time() + self.delay, b""))

        reading = asyncio.ensure_future(read())
        try:
            while True:
                due, data = await held.get()
                if (wait := due - self._loop.time()) > 0:
                    await asyncio.sleep(wait)  # the delay itself, not a wait for a condition
                if not data:
                    break
                writer.write(data)
                await writer.drain()
        finally:
            reading.cancel()
            writer.close()

    def close(self):
        if self._loop is None or self._loop.is_closed():
            return

        async def shut():
            self._server.close()
            for w in list(self._writers):
                w.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._loop.stop()
        asyncio.run_coroutine_threadsafe(shut(), self._loop)
        self._thread.join(10)
