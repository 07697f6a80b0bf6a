/** Action endpoints answer 200 with the JSON string "OK" (fidelity.md §6). */
export const actionDone = () => Response.json("OK");
