/** Where the API server is and how to prove who we are: all a RestClient needs. */
export interface ClusterAccess {
  server: string;
  ca?: Buffer | string | undefined;
  cert?: Buffer | string | undefined;
  key?: Buffer | string | undefined;
  insecureSkipTlsVerify?: boolean | undefined;
  /** Authentication headers, asked for on every request so rotating tokens are picked up. */
  headers(): Promise<Record<string, string>>;
}
