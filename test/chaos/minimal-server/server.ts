export interface MinimalServer {
  baseUrl: string;
  writeKeyFile(path: string, proxyBase: string): string;
  orders(accountId: string): { order_id: string; client_order_id: string | null; request_id: string | null; status: string }[];
  fills(accountId: string): { fill_id: string; order_id: string | null }[];
  crossRestingOrders(accountId: string): number;
  onDeadlineFired(accountId: string, listener: () => void): () => void;
  quiesce(): void;
  close(): Promise<void>;
}
export async function startMinimalServer(_o: { seed: string }): Promise<MinimalServer> {
  throw new Error('todo');
}
