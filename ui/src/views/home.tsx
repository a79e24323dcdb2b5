import type { Page } from "../page";
import { ScenariosSection } from "./scenarios-section";
import { SessionsSection } from "./sessions-section";
import "./home.css";

/** `#/`: pick a scenario to get a session, or go back to one. */
export function HomeView({ page }: { page: Page }) {
  return (
    <div class="home">
      <h1>QA dashboard</h1>
      <p class="lede">Create a session from a scenario, paste its credentials into the app under test, and watch what it sends.</p>
      <div class="home-grid">
        <ScenariosSection page={page} />
        <SessionsSection page={page} />
      </div>
    </div>
  );
}
