/** The page's shell: placeholder until the views land. */
export function App() {
  return (
    <main>
      <h1>merchant-sandbox</h1>
    </main>
  );
}
