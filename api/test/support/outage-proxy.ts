/**
 * A pass-through TCP proxy in front of a shared service (PostgreSQL, Redis, ClickHouse) that a test can
 * stop (every connection cut, the port refusing) and start again on the same port: an outage of the
 * service without touching the real one, which other tests use in parallel. It can also hold what
 * clients send until released (a request stuck on its way), or drop the service's replies (a request
 * that was carried out but whose answer never comes back).
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

  private held = false;
  private muted = false;
  private readonly clients = new Set<net.Socket>();

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.upstream);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.once('close', () => this.sockets.delete(socket));
        socket.on('error', () => { client.destroy(); upstream.destroy(); });
      }
      this.clients.add(client);
      client.once('close', () => this.clients.delete(client));
      if (this.held) client.pause();
      client.on('data', (chunk) => upstream.write(chunk));
      upstream.on('data', (chunk) => { if (!this.muted) client.write(chunk); });
      client.on('end', () => upstream.end());
      upstream.on('end', () => client.end());
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

  /** Holds what clients send (on open connections and new ones) until release(). */
  hold(): void {
    this.held = true;
    for (const client of this.clients) client.pause();
  }

  release(): void {
    this.held = false;
    for (const client of this.clients) client.resume();
  }

  /** From now on, drops what the service answers: requests are carried out, their clients never hear back. */
  mute(): void {
    this.muted = true;
  }

  unmute(): void {
    this.muted = false;
  }

  /** The service URL with its host and port replaced by the proxy's. */
  urlFor(serviceUrl: string): string {
    const url = new URL(serviceUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString().replace(/\/$/, '');
  }
}
