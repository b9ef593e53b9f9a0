/**
 * A pass-through TCP proxy in front of a shared service (PostgreSQL, Redis, ClickHouse) that a test can
 * stop (every connection cut, the port refusing) and start again on the same port: an outage of the
 * service without touching the real one, which other tests use in parallel.
 */
import net from 'node:net';

/** A pass-through TCP proxy that can be stopped (every connection cut) and started on the same port. */
export class OutageProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  get running(): boolean {
    return this.server !== null;
  }

  constructor(private readonly upstream: { host: string; port: number }) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.upstream);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.once('close', () => this.sockets.delete(socket));
        socket.on('error', () => { client.destroy(); upstream.destroy(); });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  /** The service URL with its host and port replaced by the proxy's. */
  urlFor(serviceUrl: string): string {
    const url = new URL(serviceUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString().replace(/\/$/, '');
  }
}
