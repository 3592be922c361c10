// A compose.yaml service's environment as `docker compose up` hands it to the container: `${NAME:-default}`
// and `${NAME}` replaced from the environment compose runs in (`outer`).

export function composeEnvironment(
  environment: Record<string, string>,
  outer: Record<string, string> = {},
): Record<string, string> {
  const value = (text: string) =>
    text.replace(/\$\{(\w+)(?::-([^}]*))?\}/g, (_, name: string, fallback: string | undefined) =>
      outer[name] !== undefined && outer[name] !== '' ? outer[name] : (fallback ?? ''),
    )
  return Object.fromEntries(Object.entries(environment).map(([name, text]) => [name, value(String(text))]))
}
