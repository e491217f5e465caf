/**
 * The console's entry: the theme first (so the page does not flash),
 * then the app. Errors nothing else caught become notifications.
 */
import "./tokens.css";
import "./base.css";
import { mount } from "svelte";
import App from "./App.svelte";
import { applyTheme, loadTheme } from "./lib/theme";
import { reportError } from "./lib/toast.svelte";

applyTheme(loadTheme(), false);

window.addEventListener("error", (e) => reportError(e.error ?? e.message));
window.addEventListener("unhandledrejection", (e) => reportError(e.reason));

const target = document.getElementById("app");
if (!target) throw new Error("no #app element");
export default mount(App, { target });
