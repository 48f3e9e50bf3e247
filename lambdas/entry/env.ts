/** Reads a required environment variable of a Lambda function; the CDK stack sets them all. */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`environment variable ${name} is not set`);
  return value;
}
