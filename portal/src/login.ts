// Logging in: local username and password (POST /v1/auth/login/local sets the HttpOnly
// session cookie), and the identity provider's button when the service offers OIDC
// (GET /v1/auth/methods); the provider's callback sends the browser back to the portal.
import { ApiError, get, post } from './api.js';

export interface Methods { auth_mode: string; login_methods: string[] }

export async function showLogin(root: HTMLElement, onLoggedIn: () => void): Promise<void> {
  const methods = await get<Methods>('/v1/auth/methods');
  const form = document.createElement('form');
  form.className = 'login';
  form.innerHTML = '<h2>Sign in</h2><label>Username <input name="username" autocomplete="username" required></label>'
    + '<label>Password <input name="password" type="password" autocomplete="current-password" required></label>'
    + '<button type="submit">Sign in</button><p class="error" role="alert"></p>';
  const error = form.querySelector('.error') as HTMLElement;
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const data = new FormData(form);
    error.textContent = '';
    post('/v1/auth/login/local', { username: String(data.get('username')), password: String(data.get('password')) })
      .then(onLoggedIn, (e) => { error.textContent = e instanceof ApiError && e.status === 401 ? 'Wrong username or password.' : String(e instanceof Error ? e.message : e); });
  });
  if (methods.login_methods.includes('oidc')) {
    const a = document.createElement('a');
    a.className = 'button oidc'; a.href = '/v1/auth/login'; a.textContent = 'Sign in with your organisation';
    form.appendChild(a);
  }
  root.replaceChildren(form);
}

export async function logout(): Promise<void> {
  await post('/v1/auth/logout', undefined);
  location.assign('/');
}
